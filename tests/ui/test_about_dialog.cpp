// Help: the About box names the versions in use and agrees with `workbench-cli --version` and
// with what `workbench-cli capabilities --json` really prints (the CLI this build made is run);
// the tour opens the README at the window's tour.
#include <QLabel>
#include <QProcess>
#include <QTextBlock>
#include <QTextBrowser>
#include <QtTest/QtTest>

#include <algorithm>

#include "ui_test_util.h"
#include "window/about_dialog.h"
#include "wb/records/peak_store.h"
#include "window/help_tour.h"

namespace {

// `workbench-cli capabilities --json`, as the CLI this build made prints it.
nlohmann::json realCapabilities() {
  QProcess cli;
  cli.start(wb::ui::test::cliPath(), {QStringLiteral("capabilities"), QStringLiteral("--json")});
  if (!cli.waitForFinished(60000) || cli.exitCode() != 0) return nullptr;
  return nlohmann::json::parse(cli.readAllStandardOutput().toStdString(), nullptr, false);
}

QString str(const nlohmann::json& doc, const char* key) { return QString::fromStdString(doc.at(key).get<std::string>()); }

}  // namespace

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
    // The capabilities answer too.
    QTRY_VERIFY_WITH_TIMEOUT(about.versionsText().contains(QStringLiteral("LibTorch: ")), 60000);
    QVERIFY(!about.versionsText().contains(QStringLiteral("not available (")));
  }

  // Every key the box reads is one the CLI writes, and each line says what the document says.
  void showsWhatTheCliPrints() {
    const nlohmann::json caps = realCapabilities();
    QVERIFY2(caps.is_object(), "workbench-cli capabilities --json printed no JSON object");
    for (const QString& key : wb::ui::AboutDialog::capabilityKeys())
      QVERIFY2(caps.contains(key.toStdString()), qPrintable(QStringLiteral("the CLI writes no \"%1\"").arg(key)));
    wb::ui::AboutDialog about;
    about.setCapabilities(caps, {});
    const QStringList lines = about.versionsText().split(QLatin1Char('\n'));
    QVERIFY(lines.contains(QStringLiteral("LibTorch: ") + str(caps, "libtorch")));
    QVERIFY(lines.contains(QStringLiteral("OpenCV: ") + str(caps, "opencv")));
    const QString cuda = caps.at("cuda").get<bool>() ? QStringLiteral("CUDA: yes, %1 GPU(s)").arg(caps.at("gpus").get<int>())
                                                      : QStringLiteral("CUDA: not available");
    QVERIFY2(std::any_of(lines.begin(), lines.end(), [&](const QString& l) { return l.startsWith(cuda); }),
             qPrintable(lines.join(QLatin1Char('\n'))));
    QVERIFY(lines.contains(caps.at("nccl").get<bool>() ? QStringLiteral("NCCL: yes") : QStringLiteral("NCCL: not available")));
    QVERIFY(lines.contains(caps.at("gloo").get<bool>() ? QStringLiteral("Gloo: yes") : QStringLiteral("Gloo: no")));
    wb::ui::test::grabIfAsked(about, QStringLiteral("about"), about.sizeHint());
  }

  // GPU names, when the CLI knows them, follow the count; a CLI that cannot answer is said so.
  void namesGpusAndSaysWhenTheCliFails() {
    nlohmann::json caps = realCapabilities();
    QVERIFY(caps.is_object());
    caps["cuda"] = true, caps["gpus"] = 2, caps["gpu_names"] = {"GPU A", "GPU B"};
    wb::ui::AboutDialog about;
    about.setCapabilities(caps, {});
    QVERIFY(about.versionsText().contains(QStringLiteral("CUDA: yes, 2 GPU(s): GPU A, GPU B")));
    about.setCapabilities(nullptr, QStringLiteral("exit 1"));
    QVERIFY(about.versionsText().contains(QStringLiteral("Machine capabilities: not available (exit 1)")));
    QVERIFY(!about.versionsText().contains(QStringLiteral("LibTorch: ")));
  }

  // The stored peak calibration, per device; on a GPU its datasheet entry, or that it has none.
  void showsThePeak() {
    nlohmann::json caps = realCapabilities();
    QVERIFY(caps.is_object());
    caps["peak"] = {{"measured", false}};
    wb::ui::AboutDialog about;
    about.setCapabilities(caps, {});
    QVERIFY(about.versionsText().contains(QStringLiteral("Peak: not measured on this machine (workbench-cli probe peak)")));
    wb::records::PeakResult r;
    r.measured_at = "2026-12-01T08:40:12Z";
    wb::records::PeakDevice cpu{"cpu", "Test CPU", 2, {{"matmul", "fp32", "1024", 2e9, 10, 0.2, 95.4, 0.01}}, {}};
    wb::records::PeakDevice gpu{"cuda:0", "NVIDIA H200", 0, {{"matmul", "bf16", "8192", 1e12, 10, 0.02, 700000, 0.01}}, {}};
    wb::records::PeakDevice unknown{"cuda:1", "Tesla T4", 0, {}, {}};
    r.devices = {cpu, gpu, unknown};
    wb::records::attachPeak(caps, r);
    about.setCapabilities(caps, {});
    const QString text = about.versionsText();
    QVERIFY2(text.contains(QStringLiteral("Peak (cpu, 2 threads, measured 2026-12-01): fp32 matmul 95.4 GFLOP/s")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Datasheet (dense): bf16 989.5, tf32 494.5 TFLOP/s")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Datasheet: Tesla T4 is not in the table")), qPrintable(text));
  }

  void tourOpensTheReadme() {
    wb::ui::HelpTour tour;
    QVERIFY2(tour.load(), qPrintable(tour.browser()->toPlainText()));
    QVERIFY(!tour.browser()->toPlainText().isEmpty());
    bool hasTourHeading = false;
    for (QTextBlock b = tour.browser()->document()->begin(); b.isValid(); b = b.next())
      if (b.blockFormat().headingLevel() > 0 && b.text().contains(QStringLiteral("tour"), Qt::CaseInsensitive))
        hasTourHeading = true;
    QVERIFY2(hasTourHeading, "the README has no heading with \"tour\" in it");
    const QTextBlock block = tour.browser()->textCursor().block();
    QVERIFY(block.blockFormat().headingLevel() > 0);
    QVERIFY(block.text().contains(QStringLiteral("tour"), Qt::CaseInsensitive));
    // A user of the window lands on the window's tour, not on the CLI's.
    QCOMPARE(block.text(), QStringLiteral("A tour of the window"));
  }
};

QTEST_MAIN(TestAboutDialog)
#include "test_about_dialog.moc"
