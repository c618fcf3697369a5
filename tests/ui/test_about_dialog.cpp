// Help: the About box names the versions in use and agrees with `workbench-cli --version`;
// the tour opens the README at its tour.
#include <QLabel>
#include <QProcess>
#include <QTextBlock>
#include <QTextBrowser>
#include <QtTest/QtTest>

#include "ui_test_util.h"
#include "window/about_dialog.h"
#include "window/help_tour.h"

class TestAboutDialog : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { wb::ui::test::setUpEnvironment(); }

  void agreesWithTheCli() {
    QProcess cli;
    cli.start(wb::ui::test::cliPath(), {QStringLiteral("--version")});
    QVERIFY(cli.waitForFinished(60000));
    const QString line = QString::fromUtf8(cli.readAllStandardOutput()).trimmed();
    QVERIFY(line.startsWith(QStringLiteral("workbench-cli ")));

    wb::ui::AboutDialog about;
    QSignalSpy updated(&about, &wb::ui::AboutDialog::versionsUpdated);
    about.query();
    QTRY_VERIFY_WITH_TIMEOUT(about.versionsText().contains(line), 60000);
    QVERIFY(about.versionsText().contains(QStringLiteral("Qt: ") + QString::fromLatin1(qVersion())));
    // Capabilities answer (or say why not) too.
    QTRY_VERIFY_WITH_TIMEOUT(about.versionsText().contains(QStringLiteral("CUDA: ")) ||
                                 about.versionsText().contains(QStringLiteral("capabilities: not available")),
                             60000);
  }

  void capabilitiesFillTheLibraries() {
    wb::ui::AboutDialog about;
    about.setCapabilities(nlohmann::json::parse("{\"libtorch\":\"1.13.0\",\"cuda\":true,\"cuda_version\":\"12.1\","
                                                "\"gpu_names\":[\"H200\"],\"cudnn\":\"8.9\",\"nccl\":\"2.18\"}"),
                          {});
    const QString text = about.versionsText();
    QVERIFY(text.contains(QStringLiteral("LibTorch: 1.13.0")));
    QVERIFY(text.contains(QStringLiteral("CUDA: 12.1 (H200)")));
    QVERIFY(text.contains(QStringLiteral("cuDNN: 8.9")));
    QVERIFY(text.contains(QStringLiteral("NCCL: 2.18")));
  }

  void tourOpensTheReadme() {
    wb::ui::HelpTour tour;
    if (!tour.load()) {
      QVERIFY(tour.browser()->toPlainText().contains(QStringLiteral("README")));
      QSKIP("README.md is not written yet");
    }
    QVERIFY(!tour.browser()->toPlainText().isEmpty());
    bool hasTourHeading = false;
    for (QTextBlock b = tour.browser()->document()->begin(); b.isValid(); b = b.next())
      if (b.blockFormat().headingLevel() > 0 && b.text().contains(QStringLiteral("tour"), Qt::CaseInsensitive))
        hasTourHeading = true;
    if (!hasTourHeading) QSKIP("the README has no tour heading yet");
    const QTextBlock block = tour.browser()->textCursor().block();
    QVERIFY(block.blockFormat().headingLevel() > 0);
    QVERIFY(block.text().contains(QStringLiteral("tour"), Qt::CaseInsensitive));
  }
};

QTEST_MAIN(TestAboutDialog)
#include "test_about_dialog.moc"
