// The Compare tab: a run (or baseline) measured under CPU contention shows "contended" and a
// warning instead of its speedups. It compares what the runs ingested (not their files, read
// again), and only while it is shown: a hidden tab catches up when shown. (The ladder's table
// and chart are the Experiments tab's: test_experiment_view.)
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
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

// A run launched from the window: its events arrive through ingest(), not from its folder.
Run* launchedRun(const QString& dir, const QString& name) {
  auto* run = new Run(Run::Origin::Launched);
  run->setRunDir(dir);
  run->setName(name);
  return run;
}

QString bestAccOf(const CompareView& view, int row) {
  const QTableWidget* table = view.table();
  const int c = t::columnOf(table, QStringLiteral("Best val acc"));
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
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), t::eventsReaching(0.8),
                                           QStringLiteral("ok"));
    const QString runDir = t::writeRunDir(root.path(), QStringLiteral("busy"), QStringLiteral("busy"), t::eventsReaching(0.85),
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
      QCOMPARE(table->item(1, t::columnOf(table, QString::fromUtf8(title)))->text(), QStringLiteral("contended"));
    QVERIFY(t::columnOf(table, QStringLiteral("Train samples/s")) >= 0);
    QVERIFY(t::columnOf(table, QStringLiteral("Samples/s")) < 0);
    QVERIFY(!table->item(1, 0)->icon().isNull());
    QVERIFY(table->item(1, 0)->toolTip().contains(QStringLiteral("another process used 0.9 of 2 cores")));
    QVERIFY(table->item(0, 0)->icon().isNull());
    QCOMPARE(QString::fromStdString(view.chart()->bars().bars[1].annotation), QStringLiteral("contended"));
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("compareSummary"))->text().contains(QStringLiteral("their speedups are not shown")));
    t::grabIfAsked(view, QStringLiteral("contended"));
  }

  // The summary leads with the figure: each ticked run's speedup to the target as the table gives
  // it (its interval and verdict, or that one run each has none), never a count of runs; the
  // contended run says why it has none.
  void theSummaryLeadsWithTheFigure() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), t::eventsReaching(0.8),
                                                  QStringLiteral("ok")));
    Run* other = Run::fromDirectory(t::writeRunDirWith(root.path(), QStringLiteral("other"), QStringLiteral("other"),
                                                       {{"speedups", {{"channels_last", true}}}}, t::eventsReaching(0.85),
                                                       QStringLiteral("ok")));
    model.addRun(base), model.addRun(other);
    CompareView view(&model);
    auto* answer = view.findChild<QLabel*>(QStringLiteral("compareAnswer"));
    QVERIFY(answer);
    view.refreshNow();
    QVERIFY2(answer->text().contains(QStringLiteral("Set a baseline")), qPrintable(answer->text()));
    model.setBaseline(base);
    model.setShown(other, true);
    view.refreshNow();
    const QString figure = view.table()->item(1, t::columnOf(view.table(), QStringLiteral("× to target")))->text();
    // The comparison's answer (core's compareAnswer): the change by its label, the figure, and that
    // one run each is not a verdict.
    QVERIFY2(answer->toolTip().startsWith(QStringLiteral("Channels-last")), qPrintable(answer->toolTip()));
    QVERIFY2(answer->toolTip().contains(QStringLiteral("\u00D7")) && answer->toolTip().contains(QStringLiteral("not a verdict")),
             qPrintable(answer->toolTip() + QStringLiteral(" | table: ") + figure));
    const QString summary = view.findChild<QLabel*>(QStringLiteral("compareSummary"))->text();
    QVERIFY2(!summary.contains(QStringLiteral("run(s) against")), qPrintable(summary));
    QCOMPARE(view.answerText(), answer->toolTip());
    // Shown whole, or (too narrow for three lines) cut at a word and marked, never mid-word.
    const QString shown = answer->text();
    QVERIFY2(shown == answer->toolTip() || (shown.endsWith(QStringLiteral(" …")) && answer->toolTip().startsWith(shown.chopped(2) + QLatin1Char(' '))),
             qPrintable(shown));
    // One run each: no verdict, so nothing is offered to use.
    QVERIFY(view.findChild<QPushButton*>(QStringLiteral("compareUse"))->isHidden());
  }

  // Each action a verdict suggests is a button (a data-bound run with no stored worker probe:
  // measure the best loader workers), and its command is not left in the words.
  void anAdvisorActionIsAButton() {
    auto root = t::scratchRoot();
    QTemporaryDir probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    QByteArray events;
    for (int step = 10; step <= 100; step += 10) {
      json ev = t::stepEvent(step, 1.0);
      ev["ms"]["data"] = 20.0;  // most of each step waits for data
      events += t::line(ev);
    }
    events += evalLine(1, 5.0, 0.8);
    RunsModel model;
    Run* base = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), events, QStringLiteral("ok")));
    model.addRun(base);
    CompareView view(&model);
    QSignalSpy asked(&view, &CompareView::actionRequested);
    model.setBaseline(base);
    view.refreshNow();
    QPushButton* action = nullptr;
    for (auto* b : view.findChildren<QPushButton*>(QStringLiteral("adviceAction")))
      if (b->text() == QStringLiteral("Measure the best loader workers")) action = b;
    QVERIFY2(action, "no button for the worker probe");
    action->click();
    QCOMPARE(asked.count(), 1);
    QCOMPARE(asked.first().at(0).toString(), QStringLiteral("probe workers"));
    const QString words = view.findChild<QTextBrowser*>(QStringLiteral("compareAdvice"))->toPlainText();
    QVERIFY2(words.contains(QStringLiteral("Data-bound")) && !words.contains(QStringLiteral("workbench-cli probe workers")), qPrintable(words));
    qunsetenv("WB_PROBES_DIR");
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
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("exp"), t::eventsReaching(0.8), QStringLiteral("ok"));
    const QString runDir = t::writeRunDir(root.path(), QStringLiteral("stopped"), QStringLiteral("exp"), t::eventsReaching(0.85), status,
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
      const int c = t::columnOf(table, QString::fromUtf8(title));
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
    wb::render::BarChartSpec spec;
    spec.title = "Speedup to 74.35 % val acc over the baseline fashion-mnist-lenet with a long name";
    for (int i = 0; i < 8; ++i) {
      wb::render::Bar b;
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

  // The comparison is of the events the runs ingested: the file on disk says otherwise and is
  // not read again (a launched run's events arrive from its process).
  void comparesWhatTheRunsIngested() {
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), t::eventsReaching(0.8),
                                           QStringLiteral("ok"));
    const QString liveDir = t::writeRunDir(root.path(), QStringLiteral("live"), QStringLiteral("live"), t::eventsReaching(0.5));
    Run* base = Run::fromDirectory(baseDir);
    Run* live = launchedRun(liveDir, QStringLiteral("live"));
    model.addRun(base), model.addRun(live);
    live->ingest(eventsOf(t::eventsReaching(0.9)));
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
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), t::eventsReaching(0.8),
                                           QStringLiteral("ok"));
    Run* base = Run::fromDirectory(baseDir);
    Run* live = launchedRun(root.filePath(QStringLiteral("live")), QStringLiteral("live"));
    model.addRun(base), model.addRun(live);
    CompareView view(&model);
    QSignalSpy canExport(&view, &CompareView::canExportChanged);
    model.setBaseline(base);
    model.setShown(live, true);
    live->ingest(eventsOf(t::eventsReaching(0.9)));
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

  // Export… offers TensorBoard: the baseline and the ticked runs, a folder of event files each.
  void exportsRunsForTensorBoard() {
    auto root = t::scratchRoot();
    RunsModel model;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("exp"), t::eventsReaching(0.8),
                                           QStringLiteral("ok"));
    const QString runDir = t::writeRunDir(root.path(), QStringLiteral("other"), QStringLiteral("exp"), t::eventsReaching(0.85),
                                          QStringLiteral("ok"));
    Run* base = Run::fromDirectory(baseDir);
    Run* run = Run::fromDirectory(runDir);
    Run* unticked = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("unticked"), QStringLiteral("exp"),
                                                      t::eventsReaching(0.7), QStringLiteral("ok")));
    model.addRun(base), model.addRun(run), model.addRun(unticked);
    CompareView view(&model);
    QString error;
    QVERIFY(!view.exportTensorBoard(root.filePath(QStringLiteral("tb")), &error));  // no baseline yet
    QVERIFY2(error.contains(QStringLiteral("set a baseline")), qPrintable(error));
    model.setBaseline(base);
    model.setShown(run, true);
    QVERIFY2(view.exportTensorBoard(root.filePath(QStringLiteral("tb")), &error), qPrintable(error));
    QCOMPARE(QDir(root.filePath(QStringLiteral("tb"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot),
             QStringList({QStringLiteral("base"), QStringLiteral("other")}));
    for (const char* name : {"base", "other"}) {
      const QStringList files = QDir(root.filePath(QStringLiteral("tb/") + QLatin1String(name)))
                                    .entryList({QStringLiteral("events.out.tfevents.*")}, QDir::Files);
      QCOMPARE(files.size(), 1);
    }
    // Again into the same folder: refused, in words, nothing overwritten.
    QVERIFY(!view.exportTensorBoard(root.filePath(QStringLiteral("tb")), &error));
    QVERIFY2(error.contains(QStringLiteral("already holds TensorBoard event files")), qPrintable(error));
  }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
