// The Compare tab: a run (or baseline) measured under CPU contention shows "contended" and a
// warning instead of its speedups, and an open ladder leads with the speedup at equal accuracy
// (a step that never reached the target says so with the accuracy it reached, in the chart and
// in the ladder table).
#include <QLabel>
#include <QTableWidget>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/speedup_chart.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/proto/rundir.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

// Evaluations reach `acc` at t = 5 and 10 (rising to it), then the run ends.
QByteArray eventsReaching(double acc) {
  QByteArray out = t::line(t::stepEvent(10, 2.0)) + t::line(t::stepEvent(20, 1.5));
  out += t::line(t::event("eval", {{"epoch", 1}, {"step", 20}, {"t", 5.0}, {"val_acc", acc - 0.1}, {"eval_ms", 100}}));
  out += t::line(t::event("eval", {{"epoch", 2}, {"step", 40}, {"t", 10.0}, {"val_acc", acc}, {"eval_ms", 100}}));
  return out;
}

int columnOf(const QTableWidget* table, const QString& title) {
  for (int c = 0; c < table->columnCount(); ++c)
    if (table->horizontalHeaderItem(c)->text() == title) return c;
  return -1;
}

// A ladder whose workers step ran 15× faster on wall time but fell from 68.5 % to 62.8 %.
wb::report::Ladder fieldLadder() {
  wb::report::Ladder l;
  l.target_acc = 0.685;
  wb::report::LadderRow base, workers;
  base.step.key = "baseline", base.step.added = "all speedups off";
  base.repeats = base.reached = 1;
  base.wall_s = 151, base.target_s = 150, base.val_acc = 0.685, base.cumulative = 1, base.cumulative_target = 1;
  workers.step.key = "workers", workers.step.added = "loader workers 0 → 2";
  workers.repeats = 1;
  workers.wall_s = 10, workers.val_acc = 0.628, workers.cumulative = 15.1, workers.marginal = 15.1;
  l.rows = {base, workers};
  return l;
}

// WB_GRAB_DIR=<folder>: a picture of the tab as <name>.png, for a person to look at.
void grabIfAsked(QWidget& view, const QString& name) {
  if (!qEnvironmentVariableIsSet("WB_GRAB_DIR")) return;
  view.resize(1200, 760);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  QTest::qWait(200);
  QVERIFY(view.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QLatin1Char('/') + name + QStringLiteral(".png")));
}

}  // namespace

class TestCompareView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void contendedRunShowsNoSpeedup() {
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), eventsReaching(0.8),
                                           QStringLiteral("ok"));
    const QString runDir = t::writeRunDir(root.path(), QStringLiteral("busy"), QStringLiteral("busy"), eventsReaching(0.85),
                                          QStringLiteral("ok"), {{"cpu", t::contendedCpu(0.9)}});
    Run* base = Run::fromDirectory(baseDir);
    Run* busy = Run::fromDirectory(runDir);
    model.addRun(base), model.addRun(busy);
    CompareView view(&model);
    model.setBaseline(base);
    model.setShown(busy, true);
    view.refreshNow();
    const QTableWidget* table = view.table();
    QCOMPARE(table->rowCount(), 2);
    for (const char* title : {"× to target", "× wall", "× train samples/s", "× epoch"})
      QCOMPARE(table->item(1, columnOf(table, QString::fromUtf8(title)))->text(), QStringLiteral("contended"));
    QVERIFY(columnOf(table, QStringLiteral("Train samples/s")) >= 0);
    QVERIFY(columnOf(table, QStringLiteral("Samples/s")) < 0);
    QVERIFY(!table->item(1, 0)->icon().isNull());
    QVERIFY(table->item(1, 0)->toolTip().contains(QStringLiteral("another process used 0.9 of 2 cores")));
    QVERIFY(table->item(0, 0)->icon().isNull());
    QCOMPARE(QString::fromStdString(view.chart()->bars().bars[1].annotation), QStringLiteral("contended"));
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("compareSummary"))->text().contains(QStringLiteral("their speedups are not shown")));
    grabIfAsked(view, QStringLiteral("contended"));
  }

  void ladderLeadsWithSpeedupAtEqualAccuracy() {
    auto root = t::scratchRoot();
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder.json")).toStdString(),
                                       wb::report::ladderJson(fieldLadder())).ok());
    RunsModel model;
    CompareView view(&model);
    QString error;
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    const auto& spec = view.chart()->bars();
    QVERIFY(QString::fromStdString(spec.title).contains(QStringLiteral("speedup to 68.50 % val acc")));
    QCOMPARE(int(spec.bars.size()), 2);
    QVERIFY(spec.bars[1].skipped);
    QCOMPARE(QString::fromStdString(spec.bars[1].annotation), QStringLiteral("not reached"));
    QCOMPARE(QString::fromStdString(spec.bars[1].detail), QStringLiteral("acc 62.8 %"));
    const auto* ladder = view.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QCOMPARE(ladder->item(1, columnOf(ladder, QStringLiteral("× to target")))->text(), QStringLiteral("not reached · 62.8 %"));
    QCOMPARE(ladder->item(1, columnOf(ladder, QStringLiteral("× wall")))->text(), QStringLiteral("15.1×"));
    grabIfAsked(view, QStringLiteral("ladder"));
  }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
