// Live plots: points from events land on the right tabs; a burst of events costs one replot;
// hidden tabs are not drawn until shown; the x axis and smoothing re-derive the curves; the
// baseline is drawn distinctly; plots save as PNG, SVG and PDF; long curves are drawn from their
// min/max per pixel column, and the image is the one every point draws.
#include <QtTest/QtTest>

#include "plots/fast_graph.h"
#include "plots/live_plots.h"
#include "plots/qcp.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"

#include <cmath>

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {
Run* addRun(RunsModel& model, const QString& name, int steps, double lossScale = 0) {
  auto* run = new Run(Run::Origin::Launched);
  run->setName(name);
  model.addRun(run);
  std::vector<json> events{t::startEvent(10, "cpu")};
  for (int i = 1; i <= steps; ++i) {
    json s = t::stepEvent(i, 2.0 / i);
    if (lossScale > 0) s["amp"] = {{"scale", lossScale}, {"skipped", 0}};
    events.push_back(s);
    events.push_back(t::stepEvent(i, 9.0, 1));  // rank 1: not a curve
    if (i % 10 == 0)
      events.push_back(t::event("eval", {{"epoch", i / 10}, {"step", i}, {"samples", i * 64}, {"val_loss", 1.0 / i}, {"val_acc", 0.5 + i / 100.0}}));
  }
  run->ingest(events);
  return run;
}
// A long noisy curve, appended the way a run's reader does (no events: 10^5 points).
Run* addLongRun(RunsModel& model, const QString& name, int points, int seed) {
  auto* run = new Run(Run::Origin::Launched);
  run->setName(name);
  model.addRun(run, false);
  QRandomGenerator rng{quint32(seed)};
  for (int i = 0; i < points; ++i) {
    StepPoint p;
    p.step = i;
    p.epoch = i / 1000.0;
    p.t = i * 0.01;
    p.samples = i * 64.0;
    p.loss = 2.0 * std::exp(-i / (15000.0 + 4000.0 * seed)) + 0.2 * rng.generateDouble() + 0.1 * std::sin(i / 700.0);
    p.samplesPerS = 5000 + 300 * seed + 400 * rng.generateDouble();
    run->mutableSeries().appendStep(p);
  }
  return run;
}

// Pixels that differ between two renderings of the same size by more than `tolerance` (0-255)
// in a channel.
double differingShare(const QImage& a, const QImage& b, int tolerance = 0) {
  if (a.size() != b.size()) return 1.0;
  const QImage x = a.convertToFormat(QImage::Format_RGB32), y = b.convertToFormat(QImage::Format_RGB32);
  qint64 differ = 0;
  for (int row = 0; row < x.height(); ++row) {
    const auto* p = reinterpret_cast<const QRgb*>(x.constScanLine(row));
    const auto* q = reinterpret_cast<const QRgb*>(y.constScanLine(row));
    for (int col = 0; col < x.width(); ++col) {
      const int d = std::max({std::abs(qRed(p[col]) - qRed(q[col])), std::abs(qGreen(p[col]) - qGreen(q[col])),
                              std::abs(qBlue(p[col]) - qBlue(q[col]))});
      differ += d > tolerance;
    }
  }
  return double(differ) / (double(x.width()) * x.height());
}
}  // namespace

class TestLivePlots : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void pointsLandOnTheirTabs() {
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(900, 600);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    Run* a = addRun(model, QStringLiteral("a"), 20);
    model.setShown(a, true);
    plots.showTab(QStringLiteral("loss"));
    QTRY_COMPARE(plots.pointCount(QStringLiteral("loss")), 20 + 2);  // 20 train steps (rank 0 only) + 2 evals
    QCustomPlot* loss = plots.plot(QStringLiteral("loss"));
    QCOMPARE(loss->graphCount(), 2);
    QCOMPARE(loss->graph(0)->data()->at(0)->value, 2.0);
    QCOMPARE(loss->graph(0)->data()->at(19)->key, 20.0);  // x = step

    for (const char* tab : {"accuracy", "throughput", "memory", "steptime"}) {
      plots.showTab(QString::fromLatin1(tab));
      QTRY_VERIFY2(plots.pointCount(QString::fromLatin1(tab)) > 0, tab);
    }
    // The step-time bars hold core/compare's mean split (after the warm-up interval).
    QCustomPlot* split = plots.plot(QStringLiteral("steptime"));
    QMap<QString, double> ms;
    for (int i = 0; i < split->plottableCount(); ++i)
      if (auto* b = qobject_cast<QCPBars*>(split->plottable(i)); b && !b->data()->isEmpty()) ms[b->name()] = b->data()->at(0)->value;
    QCOMPARE(ms.value(QStringLiteral("data")), 1.0);
    QCOMPARE(ms.value(QStringLiteral("fwd")), 2.0);
    QCOMPARE(ms.value(QStringLiteral("bwd")), 3.0);
    QCOMPARE(ms.value(QStringLiteral("opt")), 0.5);
    t::grabIfAsked(plots, QStringLiteral("plots-steptime"), plots.size());
    plots.showTab(QStringLiteral("loss"));
    t::grabIfAsked(plots, QStringLiteral("plots-loss"), plots.size());
    // CPU run: host RSS only (no "reserved" curve); 100 MiB.
    QCOMPARE(plots.plot(QStringLiteral("memory"))->graphCount(), 1);
    QCOMPARE(plots.plot(QStringLiteral("memory"))->graph(0)->data()->at(0)->value, 100.0);
    // No fp16 run, no loss-scale curve.
    plots.showTab(QStringLiteral("lossscale"));
    QTest::qWait(100);
    QCOMPARE(plots.pointCount(QStringLiteral("lossscale")), 0);
    Run* fp16 = addRun(model, QStringLiteral("fp16"), 5, 65536);
    model.setShown(fp16, true);
    QTRY_COMPARE(plots.pointCount(QStringLiteral("lossscale")), 5);
  }

  // A run shorter than its log interval has one step event: its curve is one point, drawn as a
  // marker (a line needs two), and a second point turns it back into a plain line.
  void aLonePointIsDrawn() {
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(900, 600);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    Run* a = addRun(model, QStringLiteral("short"), 1);
    model.setShown(a, true);
    for (const char* tab : {"loss", "throughput"}) {
      plots.showTab(QString::fromLatin1(tab));
      QTRY_COMPARE(plots.pointCount(QString::fromLatin1(tab)), 1);
      QCustomPlot* plot = plots.plot(QString::fromLatin1(tab));
      QVERIFY2(!plot->graph(0)->scatterStyle().isNone(), tab);
      t::grabIfAsked(plots, QStringLiteral("plots-lone-point-") + QString::fromLatin1(tab), plots.size());
    }
    a->ingest({t::stepEvent(2, 1.0)});
    plots.showTab(QStringLiteral("loss"));
    QTRY_COMPARE(plots.pointCount(QStringLiteral("loss")), 2);
    QVERIFY(plots.plot(QStringLiteral("loss"))->graph(0)->scatterStyle().isNone());
  }

  void burstCostsOneReplotAndHiddenTabsWait() {
    RunsModel model;
    LivePlots plots(&model);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    auto* run = new Run(Run::Origin::Launched);
    model.addRun(run);
    model.setShown(run, true);
    plots.showTab(QStringLiteral("loss"));
    QTest::qWait(100);
    const int before = plots.replotCount();
    for (int i = 1; i <= 200; ++i) run->ingest(t::stepEvent(i, 1.0));  // 200 signals in one go
    QTRY_COMPARE(plots.pointCount(QStringLiteral("loss")), 200);
    QTest::qWait(150);
    QCOMPARE(plots.replotCount() - before, 1);
    // The throughput tab was never shown: it holds nothing yet, and catches up when shown.
    QCOMPARE(plots.pointCount(QStringLiteral("throughput")), 0);
    plots.showTab(QStringLiteral("throughput"));
    QTRY_COMPARE(plots.pointCount(QStringLiteral("throughput")), 200);
  }

  void xAxisAndSmoothing() {
    RunsModel model;
    LivePlots plots(&model);
    plots.show();
    Run* a = addRun(model, QStringLiteral("a"), 20);
    model.setShown(a, true);
    plots.showTab(QStringLiteral("loss"));
    plots.flush();
    QCustomPlot* loss = plots.plot(QStringLiteral("loss"));
    plots.setXAxis(LivePlots::XAxis::Epoch);
    plots.flush();
    QCOMPARE(loss->graph(0)->data()->at(9)->key, 1.0);  // step 10 of 10 per epoch
    plots.setXAxis(LivePlots::XAxis::Samples);
    plots.flush();
    QCOMPARE(loss->graph(0)->data()->at(0)->key, 64.0);
    QCOMPARE(loss->xAxis->label(), QStringLiteral("samples seen"));

    plots.setSmoothing(0.5);
    plots.flush();
    // EMA: y1 = 2, y2 = 0.5*2 + 0.5*1 = 1.5
    QCOMPARE(loss->graph(0)->data()->at(1)->value, 1.5);
    QCOMPARE(plots.pointCount(QStringLiteral("loss")), 22);  // rebuilt, not doubled
  }

  void baselineIsDistinctAndAlwaysDrawn() {
    RunsModel model;
    LivePlots plots(&model);
    plots.show();
    Run* base = addRun(model, QStringLiteral("base"), 10);
    Run* fast = addRun(model, QStringLiteral("fast"), 10);
    model.setShown(fast, true);
    model.setBaseline(base);  // not ticked, drawn anyway
    plots.showTab(QStringLiteral("throughput"));
    plots.flush();
    QCustomPlot* p = plots.plot(QStringLiteral("throughput"));
    QCOMPARE(p->graphCount(), 2);
    QCPGraph* baseGraph = nullptr;
    QCPGraph* other = nullptr;
    for (int i = 0; i < p->graphCount(); ++i)
      (p->graph(i)->name().contains(QStringLiteral("baseline")) ? baseGraph : other) = p->graph(i);
    QVERIFY(baseGraph && other);
    QVERIFY(baseGraph->pen().widthF() > other->pen().widthF());
    model.setShown(fast, false);
    plots.flush();
    QCOMPARE(p->graphCount(), 1);
  }

  // Long curves are sampled per pixel column without visiting every point, and the line is
  // QCustomPlot's own, point for point: the two images are the same pixels, whole, zoomed, live
  // (points appended after the first draw), smoothed and on another x axis; antialiased, and dense
  // (past the antialiasing limit: 1-px segments, handed to the painter in one call).
  void fastSamplingDrawsTheSameImage_data() {
    QTest::addColumn<int>("runs");
    QTest::addColumn<bool>("dense");
    QTest::newRow("antialiased") << 3 << false;
    QTest::newRow("dense") << 4 << true;  // 240,000 points
  }
  void fastSamplingDrawsTheSameImage() {
    QFETCH(int, runs);
    QFETCH(bool, dense);
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(1000, 600);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    for (int r = 0; r < runs; ++r) model.setShown(addLongRun(model, QStringLiteral("run %1").arg(r), 60000, r), true);
    plots.showTab(QStringLiteral("loss"));
    plots.syncAll();  // past 200,000 points a first load comes in slices
    QCustomPlot* loss = plots.plot(QStringLiteral("loss"));
    QCOMPARE(loss->notAntialiasedElements().testFlag(QCP::aePlottables), dense);
    auto render = [&](bool fast, int* drawn) {
      plots.setDecimation(fast);
      plots.flush(true);
      *drawn = plots.drawnPointCount(QStringLiteral("loss"));
      return loss->toPixmap().toImage();
    };
    auto same = [&](const char* what) {
      int fastDrawn = 0, qcpDrawn = 0;
      const QImage fast = render(true, &fastDrawn), qcp = render(false, &qcpDrawn);
      const double differ = differingShare(fast, qcp);
      qInfo("%s: %d points, %d drawn, %.4f %% of pixels differ", what, plots.pointCount(QStringLiteral("loss")), fastDrawn,
            differ * 100);
      QCOMPARE(fastDrawn, qcpDrawn);
      QCOMPARE(differ, 0.0);
    };
    same("whole");
    QVERIFY(plots.drawnPointCount(QStringLiteral("loss")) * 10 < plots.pointCount(QStringLiteral("loss")));
    plots.setDecimation(true);
    plots.flush(true);
    auto* first = dynamic_cast<FastGraph*>(loss->graph(0));
    QVERIFY(first && first->lastDrawSampledHere());  // the fast path drew it
    loss->xAxis->setRange(20000, 26000);  // a zoom
    same("zoomed");
    loss->xAxis->setRange(0, 700);  // every point a pixel column of its own: no sampling
    same("close up");
    // Live: points appended after the first draw (the summary grows with them).
    Run* run = model.shownRuns().front();
    for (int i = 60000; i < 61000; ++i) {
      StepPoint p;
      p.step = i;
      p.loss = 0.5 + 0.3 * std::sin(i / 50.0);
      run->mutableSeries().appendStep(p);  // no epoch: this curve cannot be re-keyed to epochs
    }
    Q_EMIT run->dataAppended();
    plots.flush(true);
    same("appended");
    // Smoothing rewrites the values in place (the summary starts over).
    plots.setSmoothing(0.9);
    plots.flush(true);
    same("smoothed");
    QCOMPARE(plots.pointCount(QStringLiteral("loss")), runs * 60000 + 1000);
    // Another x axis rewrites the keys in place (the first run's curve, whose appended points
    // have no epoch, is taken again): the same curves as a plot that loads under that axis.
    const QCPGraphData* keptData = loss->graph(loss->graphCount() - 1)->data()->constBegin().operator->();
    plots.setXAxis(LivePlots::XAxis::Epoch);
    same("x axis epoch");
    QCOMPARE(loss->graph(loss->graphCount() - 1)->data()->constBegin().operator->(), keptData);  // in place
    LivePlots fresh(&model);
    fresh.resize(1000, 600);
    fresh.setXAxis(LivePlots::XAxis::Epoch);
    fresh.setSmoothing(0.9);
    fresh.showTab(QStringLiteral("loss"));
    fresh.syncAll();
    QCustomPlot* freshLoss = fresh.plot(QStringLiteral("loss"));
    QCOMPARE(freshLoss->graphCount(), loss->graphCount());
    for (int g = 0; g < loss->graphCount(); ++g) {
      const auto a = loss->graph(g)->data(), b = freshLoss->graph(g)->data();
      QCOMPARE(a->size(), b->size());
      for (int i = 0; i < a->size(); ++i) {
        QCOMPARE(a->at(i)->key, b->at(i)->key);
        QCOMPARE(a->at(i)->value, b->at(i)->value);
      }
    }
    QCOMPARE(plots.pointCount(QStringLiteral("loss")), runs * 60000);  // the points without an epoch left out
    plots.setXAxis(LivePlots::XAxis::Step);
    same("x axis step");
    QCOMPARE(plots.pointCount(QStringLiteral("loss")), runs * 60000 + 1000);
  }

  // The legend's names are elided to the plot's width, and again when the width changes: a window
  // made wider shows the whole name (the names were cut at the width they were first drawn at).
  void legendNamesFollowTheWidth() {
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(500, 500);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    const QString name = QStringLiteral("mnist-cnn on fashion-mnist · workers 2 + bf16-mixed + channels-last, seed 1003");
    model.setShown(addRun(model, name, 10), true);
    plots.showTab(QStringLiteral("throughput"));
    plots.flush(true);
    QCustomPlot* p = plots.plot(QStringLiteral("throughput"));
    QVERIFY(p->graphCount() > 0);
    QVERIFY2(p->graph(0)->name().contains(QChar(0x2026)), qPrintable(p->graph(0)->name()));  // cut in the middle
    plots.resize(1800, 500);
    QTRY_VERIFY2(p->graph(0)->name() == name, qPrintable(p->graph(0)->name()));
  }

  // Twenty runs ticked: twenty colours; a plot too short for its y label says it short.
  void manyRunsAndSmallPlots() {
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(1000, 700);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    for (int r = 0; r < 20; ++r)
      model.setShown(addRun(model, QStringLiteral("mnist-cnn on fashion-mnist · workers 2 + bf16-mixed, try %1").arg(r), 10), true);
    plots.showTab(QStringLiteral("throughput"));
    plots.flush(true);
    plots.flush(true);  // the legend's columns follow the layout of the previous draw
    QCustomPlot* p = plots.plot(QStringLiteral("throughput"));
    QSet<QRgb> colours;
    for (int i = 0; i < p->graphCount(); ++i) colours.insert(p->graph(i)->pen().color().rgb());
    QCOMPARE(colours.size(), 20);
    // The legend keeps to about a quarter of the plot, however long the names.
    QVERIFY2(p->legend->outerRect().height() <= p->height() * 0.3,
             qPrintable(QStringLiteral("legend %1 px of %2").arg(p->legend->outerRect().height()).arg(p->height())));
    QCOMPARE(p->yAxis->label(), QStringLiteral("train samples / s"));
    plots.resize(700, 260);
    QTest::qWait(50);
    plots.flush(true);
    plots.flush(true);  // the label follows the layout of the previous draw
    QCOMPARE(p->yAxis->label(), QStringLiteral("samples/s"));
  }

  void savesImages_data() {
    QTest::addColumn<QString>("ext");
    QTest::addColumn<QByteArray>("magic");
    QTest::newRow("png") << "png" << QByteArray("\x89PNG");
    QTest::newRow("svg") << "svg" << QByteArray("<?xml");
    QTest::newRow("pdf") << "pdf" << QByteArray("%PDF");
  }
  void savesImages() {
    QFETCH(QString, ext);
    QFETCH(QByteArray, magic);
    RunsModel model;
    LivePlots plots(&model);
    plots.resize(800, 500);
    plots.show();
    model.setShown(addRun(model, QStringLiteral("a"), 20), true);
    plots.flush();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("plot.") + ext);
    QString err;
    QVERIFY2(plots.saveCurrentPlot(path, &err), qPrintable(err));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.size() > 500);
    QVERIFY(f.read(magic.size()) == magic);
    QVERIFY(!plots.saveCurrentPlot(dir.filePath(QStringLiteral("plot.bmpx")), &err));
    QVERIFY(err.contains(QStringLiteral(".png")));
  }
};

QTEST_MAIN(TestLivePlots)
#include "test_live_plots.moc"
