// The Compare tab: a run (or baseline) measured under CPU contention shows "contended" and a
// warning instead of its speedups, and an open ladder leads with the speedup at equal accuracy
// (a step that never reached the target says so with the accuracy it reached, in the chart and
// in the ladder table). It compares what the runs ingested (not their files, read again), and
// only while it is shown: a hidden tab catches up when shown.
#include <QFile>
#include <QLabel>
#include <QTableWidget>
#include <QTabWidget>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/speedup_chart.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "plots/qcp.h"
#include "ui_test_util.h"
#include "wb/proto/config_json.h"
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
wb::ladder::Ladder fieldLadder() {
  wb::ladder::Ladder l;
  l.target_acc = 0.685;
  wb::ladder::LadderRow base, workers;
  base.step.key = "baseline", base.step.added = "all speedups off";
  base.repeats = base.reached = 1;
  base.wall_s = 151, base.target_s = 150, base.val_acc = 0.685, base.cumulative = 1, base.cumulative_target = 1;
  workers.step.key = "workers", workers.step.added = "loader workers 0 → 2";
  workers.repeats = 1;
  workers.wall_s = 10, workers.val_acc = 0.628, workers.cumulative = 15.1, workers.marginal = 15.1;
  l.rows = {base, workers};
  return l;
}

// A run launched from the window: its events arrive through ingest(), not from its folder.
Run* launchedRun(const QString& dir, const QString& name) {
  auto* run = new Run(Run::Origin::Launched);
  run->setRunDir(dir);
  run->setName(name);
  return run;
}

QString bestAccOf(const CompareView& view, int row) {
  const QTableWidget* table = view.table();
  const int c = columnOf(table, QStringLiteral("Best val acc"));
  return c >= 0 && row < table->rowCount() ? table->item(row, c)->text() : QStringLiteral("(no column)");
}

QByteArray evalLine(int epoch, double t, double acc) {
  return t::line(t::event("eval", {{"epoch", epoch}, {"step", epoch * 20}, {"t", t}, {"val_acc", acc}, {"eval_ms", 100}}));
}

// One CSV line's fields (quoted fields may hold commas and doubled quotes).
QStringList csvFields(const QString& line) {
  QStringList out;
  QString field;
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted && c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) field += c, ++i;
    else if (c == QLatin1Char('"')) quoted = !quoted;
    else if (c == QLatin1Char(',') && !quoted) out << field, field.clear();
    else field += c;
  }
  out << field;
  return out;
}

std::vector<json> eventsOf(const QByteArray& lines) {
  std::vector<json> out;
  for (const QByteArray& l : lines.split('\n'))
    if (auto ev = wb::proto::decodeEvent(l.toStdString())) out.push_back(*ev);
  return out;
}

}  // namespace

class TestCompareView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  // With nothing compared (no baseline) the table is no empty box: it says what it will hold.
  void anEmptyComparisonSaysWhatItWillHold() {
    RunsModel model;
    CompareView view(&model);
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.refreshNow();
    QCOMPARE(view.table()->rowCount(), 0);
    QWidget* area = view.table()->viewport();
    const QImage shot = area->grab().toImage();
    const QColor base = area->palette().color(QPalette::Base);
    int drawn = 0;  // pixels of the placeholder's words
    for (int y = 0; y < shot.height(); ++y)
      for (int x = 0; x < shot.width(); ++x) drawn += shot.pixelColor(x, y) != base;
    QVERIFY2(drawn > 200, qPrintable(QString::number(drawn)));
  }

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
    t::grabIfAsked(view, QStringLiteral("contended"));
  }

  // A run that did not finish gets no speedup in the window's table, chart and exports; every
  // run is labelled as the runs list names it (the whole name: the chart elides it to its bar).
  void unfinishedRunsGetNoSpeedupAnywhere_data() {
    QTest::addColumn<QString>("status");
    QTest::newRow("failed") << "failed";
    QTest::newRow("cancelled") << "cancelled";
  }
  void unfinishedRunsGetNoSpeedupAnywhere() {
    QFETCH(QString, status);
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("exp"), eventsReaching(0.8), QStringLiteral("ok"));
    const QString runDir = t::writeRunDir(root.path(), QStringLiteral("stopped"), QStringLiteral("exp"), eventsReaching(0.85), status,
                                          {{"wall_s", 1.0}, {"run_wall_s", 1.2}});
    json config = wb::proto::configToJson(wb::Config{});
    config["name"] = "exp";
    config["speedups"]["precision"] = "bf16-mixed";
    QVERIFY(t::writeFile(runDir + QStringLiteral("/config.json"), QByteArray::fromStdString(config.dump(2))));
    Run* base = Run::fromDirectory(baseDir);
    Run* run = Run::fromDirectory(runDir);
    model.addRun(base), model.addRun(run);
    CompareView view(&model);
    model.setBaseline(base);
    model.setShown(run, true);
    view.refreshNow();
    const QTableWidget* table = view.table();
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("+ bf16"));
    for (const char* title : {"× to target", "× wall", "× train samples/s", "× epoch"}) {
      const int c = columnOf(table, QString::fromUtf8(title));
      QVERIFY2(c >= 0, title);
      QVERIFY2(!table->item(1, c)->text().contains(QStringLiteral("×")), qPrintable(table->item(1, c)->text()));
    }
    const auto& bar = view.chart()->bars().bars.at(1);
    QVERIFY(bar.skipped);
    QCOMPARE(QString::fromStdString(bar.annotation), status + QStringLiteral(": no speedup"));
    QCOMPARE(QString::fromStdString(bar.label), QStringLiteral("+ bf16"));
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("compareSummary"))->text().contains(QStringLiteral("did not finish")));
    // The exports from the window say the same.
    const QString csv = root.filePath(QStringLiteral("out.csv"));
    QString error;
    QVERIFY2(view.exportTo(csv, &error), qPrintable(error));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QStringLiteral("\r\n"));
    const QStringList header = csvFields(lines.value(0)), row = csvFields(lines.value(2));
    QCOMPARE(row.value(0), QStringLiteral("+ bf16"));
    int speedupColumns = 0;
    for (int c = 0; c < header.size(); ++c) {
      if (!header[c].startsWith(QStringLiteral("x ")) && !header[c].startsWith(QStringLiteral("× "))) continue;
      ++speedupColumns;
      bool number = false;
      row.value(c).toDouble(&number);
      QVERIFY2(!number, qPrintable(header[c] + QStringLiteral(": ") + row.value(c)));
    }
    QVERIFY(speedupColumns >= 4);
  }

  // Laid out at a small size, the chart's labels, annotations and title fit their room.
  void theChartFitsItsWidth() {
    wb::report::BarChartSpec spec;
    spec.title = "Speedup to 74.35 % val acc over the baseline fashion-mnist-lenet with a long name";
    for (int i = 0; i < 8; ++i) {
      wb::report::Bar b;
      b.label = "fashion-mnist-lenet / 0" + std::to_string(i) + "-precision-bf16-mixed-d473";
      b.skipped = i % 2 == 1;
      b.annotation = b.skipped ? "not reached" : "1.23×";
      b.value = 1.23;
      b.detail = "acc 11.5 %";
      spec.bars.push_back(b);
    }
    SpeedupChart chart;
    chart.resize(420, 260);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setBars(spec);
    QCustomPlot* plot = chart.plot();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    // The annotations of neighbouring bars never overlap.
    QVector<QRectF> boxes;
    for (int i = 0; i < plot->itemCount(); ++i)
      if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && !text->text().isEmpty() && text->position->type() == QCPItemPosition::ptPlotCoords) {
        const QFontMetrics fm(text->font());
        double w = 0;
        for (const QString& line : text->text().split(QLatin1Char('\n'))) w = std::max<double>(w, fm.horizontalAdvance(line));
        const double x = text->position->pixelPosition().x();
        boxes << QRectF(x - w / 2, 0, w, 1);
      }
    QCOMPARE(boxes.size(), 8);
    for (int i = 1; i < boxes.size(); ++i) QVERIFY2(boxes[i - 1].right() <= boxes[i].left(), qPrintable(QString::number(i)));
    // The title wraps instead of running off both edges.
    auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    QVERIFY(title);
    for (const QString& line : title->text().split(QLatin1Char('\n')))
      QVERIFY2(QFontMetrics(title->font()).horizontalAdvance(line) <= plot->width(), qPrintable(line));
    // The tick labels are not slanted (a slanted label takes the bars' height).
    QCOMPARE(plot->axisRect()->axis(QCPAxis::atBottom)->tickLabelRotation(), 0.0);
  }

  void ladderLeadsWithSpeedupAtEqualAccuracy() {
    auto root = t::scratchRoot();
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder.json")).toStdString(),
                                       wb::ladder::ladderJson(fieldLadder())).ok());
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
    QCOMPARE(ladder->item(1, columnOf(ladder, QStringLiteral("× wall")))->text(), QStringLiteral("15.1× (no interval)"));  // an older ladder.json
    t::grabIfAsked(view, QStringLiteral("ladder"));
  }

  // A greedy step measured by parts (its try.json) reads as such: its pairs cell says so, its
  // headline is the composed speedup with its interval, its note the split.
  void aLadderStepByPartsShowsItsSplit() {
    auto root = t::scratchRoot();
    wb::ladder::LadderStepRuns base, precision;
    base.step.key = "baseline", base.step.added = "all speedups off";
    precision.step.key = "precision", precision.step.added = "precision 32-true → bf16-mixed";
    precision.decision = "kept: 1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)";
    precision.by_parts = {{"method", "composed"}, {"reached", true},
                          {"words", "1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)"},
                          {"variant_runs", {"a", "b", "c", "d", "e"}},
                          {"medians", {{"time_to_target_s", {{"baseline", 13.1}, {"variant", 10.0}}},
                                       {"train_samples_per_s", {{"baseline", 10000}, {"variant", 14500}}}}},
                          {"estimate", {{"to_target", {{"point", 1.31}, {"lo", 1.2}, {"hi", 1.43}, {"verdict", "faster"}, {"pairs", 0}}},
                                        {"throughput", {{"point", 1.45}, {"lo", 1.4}, {"hi", 1.5}, {"verdict", "faster"}, {"pairs", 6}}}}}};
    const auto l = wb::ladder::summarizeLadder({base, precision}, 0.7, {}, {"ok", "", true});
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder.json")).toStdString(), wb::ladder::ladderJson(l)).ok());
    RunsModel model;
    CompareView view(&model);
    QString error;
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    const auto* ladder = view.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QVERIFY2(ladder->item(1, columnOf(ladder, QStringLiteral("× to target")))->text().startsWith(QStringLiteral("1.31× [1.20, 1.43]")),
             qPrintable(ladder->item(1, columnOf(ladder, QStringLiteral("× to target")))->text()));
    QVERIFY(ladder->item(1, columnOf(ladder, QStringLiteral("Pairs")))->text().contains(QStringLiteral("by parts")));
    QVERIFY(ladder->item(1, columnOf(ladder, QStringLiteral("Note")))->text().contains(QStringLiteral("1.45× throughput")));
    t::grabIfAsked(view, QStringLiteral("ladder-by-parts"));
    if (qEnvironmentVariableIsSet("WB_GRAB_LADDER")) {  // a real ladder's folder, to look at
      CompareView real(&model);
      real.resize(1280, 800);
      real.show();
      QVERIFY(QTest::qWaitForWindowExposed(&real));
      QVERIFY2(real.openLadder(qEnvironmentVariable("WB_GRAB_LADDER"), &error), qPrintable(error));
      QTest::qWait(300);
      QVERIFY(!real.chart()->bars().bars.empty());
      t::grabIfAsked(real, QStringLiteral("ladder-real"));
      for (auto* tabs : real.findChildren<QTabWidget*>())
        for (int i = 0; i < tabs->count(); ++i)
          if (tabs->tabText(i) == QLatin1String("Chart")) tabs->setCurrentIndex(i);
      QTest::qWait(300);
      t::grabIfAsked(real, QStringLiteral("ladder-real-chart"));
    }
  }

  // One chart per question: the ladder's once opened; the ticked runs' again,
  // matching the table, once the baseline or the ticks change.
  void theChartFollowsTheLastQuestion() {
    auto root = t::scratchRoot();
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder.json")).toStdString(),
                                       wb::ladder::ladderJson(fieldLadder())).ok());
    RunsModel model;
    Run* base = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"),
                                                  eventsReaching(0.8), QStringLiteral("ok")));
    Run* other = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("other"), QStringLiteral("other"),
                                                   eventsReaching(0.9), QStringLiteral("ok")));
    model.addRun(base), model.addRun(other);
    CompareView view(&model);
    QString error;
    view.setRunsRoot(root.path());
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    QVERIFY(QString::fromStdString(view.chart()->bars().title).contains(QStringLiteral("68.50 %")));
    // Export… opens where what is shown lives (the ladder's folder), not the home folder.
    QCOMPARE(view.exportStartPath(), QDir(root.path()).filePath(QStringLiteral("ladder.html")));
    model.setBaseline(base);
    model.setShown(other, true);
    view.refreshNow();
    const QString title = QString::fromStdString(view.chart()->bars().title);
    QVERIFY2(!title.contains(QStringLiteral("68.50 %")), qPrintable(title));
    QCOMPARE(int(view.chart()->bars().bars.size()), view.table()->rowCount());  // the table's runs
    QCOMPARE(view.exportStartPath(), QDir(root.path()).filePath(QStringLiteral("comparison.html")));  // the runs folder
  }

  // The comparison is of the events the runs ingested: the file on disk says otherwise and is
  // not read again (a launched run's events arrive from its process).
  void comparesWhatTheRunsIngested() {
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), eventsReaching(0.8),
                                           QStringLiteral("ok"));
    const QString liveDir = t::writeRunDir(root.path(), QStringLiteral("live"), QStringLiteral("live"), eventsReaching(0.5));
    Run* base = Run::fromDirectory(baseDir);
    Run* live = launchedRun(liveDir, QStringLiteral("live"));
    model.addRun(base), model.addRun(live);
    live->ingest(eventsOf(eventsReaching(0.9)));
    CompareView view(&model);
    model.setBaseline(base);
    model.setShown(live, true);
    view.refreshNow();
    QCOMPARE(view.table()->rowCount(), 2);
    QCOMPARE(bestAccOf(view, 0), QStringLiteral("80.00 %"));
    QCOMPARE(bestAccOf(view, 1), QStringLiteral("90.00 %"));
    // A later evaluation arrives: the shown tab follows it (debounced).
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    live->ingest(eventsOf(evalLine(3, 15.0, 0.95)));
    QTRY_COMPARE_WITH_TIMEOUT(bestAccOf(view, 1), QStringLiteral("95.00 %"), 5000);
  }

  // Hidden, the tab computes nothing; shown, it catches up at once.
  void aHiddenTabCatchesUpWhenShown() {
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), eventsReaching(0.8),
                                           QStringLiteral("ok"));
    Run* base = Run::fromDirectory(baseDir);
    Run* live = launchedRun(root.filePath(QStringLiteral("live")), QStringLiteral("live"));
    model.addRun(base), model.addRun(live);
    CompareView view(&model);
    QSignalSpy canExport(&view, &CompareView::canExportChanged);
    model.setBaseline(base);
    model.setShown(live, true);
    live->ingest(eventsOf(eventsReaching(0.9)));
    QTest::qWait(700);  // longer than the debounce
    QVERIFY(view.isStale());
    QVERIFY(!view.report().has_value());
    QCOMPARE(view.table()->rowCount(), 0);
    QVERIFY(view.canExport());  // File → Export stays on offer: it shows the tab first
    QCOMPARE(canExport.size(), 1);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(!view.isStale());
    QCOMPARE(view.table()->rowCount(), 2);
    QCOMPARE(bestAccOf(view, 1), QStringLiteral("90.00 %"));
  }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
