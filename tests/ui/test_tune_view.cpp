// The Compare tab's Fastest page: Find fastest runs a real `workbench-cli tune` (the CLI this
// build made) on a tiny experiment, shows its trials as they end and its finals at the end, and
// "Use best" hands over the best.json it wrote. Without a baseline it says what to do.
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest/QtTest>

#include "../support/machine.h"

#include "compare/experiment_runner.h"
#include "compare/tune_view.h"
#include "ui_test_util.h"
#include "wb/common/paths.h"

using namespace wb::ui;
namespace t = wb::ui::test;

class TestTuneView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    t::setUpEnvironment();
    WB_NEED(wb::test::missingFashionMnist());
  }

  void findFastestShowsTheSearchAndHandsOverBest() {
    auto root = t::scratchRoot();
    const QString config = root.filePath(QStringLiteral("exp.json"));
    QFile f(config);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"model": {"name": "mlp"}, "data": {"limit_train": 2048, "limit_val": 256}, "train": {"threads": 1}})");
    f.close();
    TuneView view;
    view.setRunsRoot(root.path());
    view.setConfigSource([config](QString*) { return config; });
    view.setSearchArguments({QStringLiteral("--only"), QStringLiteral("workers"), QStringLiteral("--no-batch"), QStringLiteral("--max-pairs"),
                             QStringLiteral("1")});
    QSignalSpy progress(view.runner(), &ExperimentRunner::progress);
    QSignalSpy finished(view.runner(), &ExperimentRunner::finished);
    QSignalSpy use(&view, &TuneView::useConfig);
    QVERIFY(view.findFastest());
    QVERIFY(!view.findFastest());  // one search at a time
    QVERIFY(finished.wait(300000));
    bool sawTrial = false;
    for (const auto& args : progress) sawTrial = sawTrial || args.at(0).toString().startsWith(QStringLiteral("trial "));
    QVERIFY(sawTrial);
    auto* summary = view.findChild<QLabel*>(QStringLiteral("tuneSummary"));
    QVERIFY2(summary->text().startsWith(QStringLiteral("Best: ")), qPrintable(summary->text()));
    // The figure in the answers' words, once: never "[lo, hi] within noise", never the label twice.
    QVERIFY2(!summary->text().contains(QStringLiteral("] within noise")) && summary->text().count(QStringLiteral("Best")) == 1,
             qPrintable(summary->text()));
    QVERIFY(view.findChild<QTableWidget*>(QStringLiteral("tuneTable"))->rowCount() >= 0);
    view.resize(1100, 420);
    view.show();
    t::grabIfAsked(view, QStringLiteral("tune-view"), QSize(1100, 420));
    auto* useBest = view.findChild<QPushButton*>(QStringLiteral("tuneUseBest"));
    QVERIFY(useBest->isEnabled());
    useBest->click();
    QCOMPARE(use.count(), 1);
    const QString best = use.at(0).at(0).toString();
    QVERIFY(best.endsWith(QStringLiteral("/best.json")) && QFile::exists(best));
  }

  void withoutABaselineItSaysWhatToDo() {
    TuneView view;
    view.setConfigSource([](QString* why) {
      *why = QStringLiteral("Set a baseline first: Find fastest searches from the baseline's experiment.");
      return QString();
    });
    QVERIFY(!view.findFastest());
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("tuneSummary"))->text().contains(QStringLiteral("baseline")));
    QVERIFY(!view.runner()->isRunning());
  }
};

QTEST_MAIN(TestTuneView)
#include "test_tune_view.moc"
