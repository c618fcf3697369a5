// The Compare tab's speedup chart: each bar of the spec is drawn at its value (a bar with no
// valid speedup as an outline at the 1x line, with its reason), its annotation above it, and
// the chart saves as SVG (the same drawing the CLI writes), PNG and PDF; a write that fails
// names the path and leaves no file.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QtTest/QtTest>

#include <cmath>

#include "compare/speedup_chart.h"
#include "plots/qcp.h"
#include "ui_test_util.h"
#include "wb/common/fs.h"

using wb::ui::SpeedupChart;
namespace t = wb::ui::test;

namespace {

wb::render::BarChartSpec threeBars() {
  wb::render::BarChartSpec spec;
  spec.title = "Cumulative speedup to 85.00 % val acc";
  spec.y_label = "× baseline";
  spec.bars = {{"baseline", 1.0, "1.00×", false, "acc 85.0 %"},
               {"workers", 1.85, "1.85×", false, "acc 85.2 %"},
               {"precision", 0, "not reached", true, "acc 80.1 %"}};
  return spec;
}

// The bars of the plot: (key, value) of each data point of the filled and the outlined bars.
QList<QPointF> barsOf(QCustomPlot* plot, bool outlined) {
  QList<QPointF> out;
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
    if (!bars || (bars->brush().style() == Qt::NoBrush) != outlined) continue;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) out << QPointF(it->key, it->value);
  }
  return out;
}

QStringList textsOf(QCustomPlot* plot) {
  QStringList out;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) out << t->text();
  return out;
}

}  // namespace

class TestSpeedupChart : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void drawsEachBarWithItsAnnotation() {
    SpeedupChart chart;
    chart.resize(800, 400);
    QVERIFY(chart.isEmpty());
    QVERIFY(textsOf(chart.plot()).join(QLatin1Char(' ')).contains(QStringLiteral("No speedups to show yet")));
    chart.setBars(threeBars());
    QVERIFY(!chart.isEmpty());
    QCOMPARE(barsOf(chart.plot(), false), (QList<QPointF>{{1, 1.0}, {2, 1.85}}));
    QCOMPARE(barsOf(chart.plot(), true), (QList<QPointF>{{3, 1.0}}));  // at the reference line
    const QStringList texts = textsOf(chart.plot());
    QVERIFY2(texts.contains(QStringLiteral("1.85×\nacc 85.2 %")), qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY2(texts.contains(QStringLiteral("not reached\nacc 80.1 %")), qPrintable(texts.join(QLatin1Char('|'))));
    // Room above the tallest bar for its annotation.
    QVERIFY(chart.plot()->axisRect()->axis(QCPAxis::atLeft)->range().upper > 1.85);
    chart.setBars({});
    QVERIFY(chart.isEmpty());
    QVERIFY(barsOf(chart.plot(), false).isEmpty());
  }

  // Narrow: a long label is elided under its bar, and hovering the bar shows it whole.
  void aNarrowChartElidesLabelsAndTheTipHasThemWhole() {
    SpeedupChart chart;
    chart.resize(420, 260);
    auto spec = threeBars();
    spec.bars[1].label = "workers 2 · 20261201-120000-fashion-mnist-lenet-0008";
    for (int i = 0; i < 6; ++i) spec.bars.push_back(spec.bars[2]);
    chart.setBars(spec);
    auto* ticker = dynamic_cast<QCPAxisTickerText*>(chart.plot()->axisRect()->axis(QCPAxis::atBottom)->ticker().data());
    QVERIFY(ticker);
    QVERIFY(ticker->ticks().value(2).contains(QStringLiteral("…")));
    QVERIFY(chart.barTip(1).startsWith(QStringLiteral("workers 2 · 20261201-120000-fashion-mnist-lenet-0008\n1.85×")));
    QVERIFY(chart.barTip(99).isEmpty());
  }

  // A bar with a 95 % interval gets an error bar from lo to hi and its annotation above the
  // whisker; one without (1 run each) gets none.
  void drawsEachIntervalAsAnErrorBar() {
    SpeedupChart chart;
    chart.resize(800, 400);
    auto spec = threeBars();
    spec.bars[1].lo = 1.40, spec.bars[1].hi = 2.30;
    chart.setBars(spec);
    QCPErrorBars* errors = nullptr;
    for (int i = 0; i < chart.plot()->plottableCount(); ++i)
      if (auto* e = qobject_cast<QCPErrorBars*>(chart.plot()->plottable(i))) errors = e;
    QVERIFY(errors);
    QCOMPARE(errors->dataCount(), 2);  // one per measured bar: baseline and workers
    QVERIFY(std::isnan(errors->data()->at(0).errorMinus));  // the baseline: no interval
    QCOMPARE(errors->data()->at(1).errorMinus, 1.85 - 1.40);
    QCOMPARE(errors->data()->at(1).errorPlus, 2.30 - 1.85);
    for (int i = 0; i < chart.plot()->itemCount(); ++i) {
      auto* t = qobject_cast<QCPItemText*>(chart.plot()->item(i));
      if (t && t->text().startsWith(QStringLiteral("1.85×"))) QCOMPARE(t->position->value(), 2.30);
    }
    QVERIFY(chart.plot()->axisRect()->axis(QCPAxis::atLeft)->range().upper > 2.30);
  }

  void savesSvgPngAndPdf() {
    QTemporaryDir dir;
    SpeedupChart chart;
    chart.resize(800, 400);
    chart.setBars(threeBars());
    QString error;
    const QString svg = dir.filePath(QStringLiteral("chart.svg"));
    QVERIFY2(chart.save(svg, &error), qPrintable(error));
    auto written = wb::readFile(svg.toStdString());
    QVERIFY(written.ok());
    QCOMPARE(QString::fromStdString(*written),
             QString::fromStdString(wb::render::toSvg(wb::render::barChart(threeBars()))));  // the CLI's drawing
    const QString png = dir.filePath(QStringLiteral("chart.png"));
    QVERIFY2(chart.save(png, &error), qPrintable(error));
    const QImage image(png);
    QCOMPARE(image.width(), chart.plot()->width() * 2);  // twice the widget: crisp on high-DPI screens
    const QString pdf = dir.filePath(QStringLiteral("chart.pdf"));
    QVERIFY2(chart.save(pdf, &error), qPrintable(error));
    QFile f(pdf);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.read(5).startsWith("%PDF"));
    QVERIFY(!QFile::exists(pdf + QStringLiteral(".tmp-pdf")));
  }

  void aFailedWriteNamesThePathAndLeavesNoFile() {
    QTemporaryDir dir;
    SpeedupChart chart;
    chart.setBars(threeBars());
    QString error;
    // A file where the folder should be: nothing can be written under it.
    QVERIFY(t::writeFile(dir.filePath(QStringLiteral("blocker")), "not a folder"));
    for (const char* name : {"blocker/chart.svg", "blocker/chart.png", "blocker/chart.pdf"}) {
      const QString path = dir.filePath(QString::fromLatin1(name));
      error.clear();
      QVERIFY2(!chart.save(path, &error), name);
      QVERIFY2(error.contains(QStringLiteral("blocker")), qPrintable(error));
    }
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("blocker")});  // no temp file left
    QVERIFY(!chart.save(dir.filePath(QStringLiteral("chart.bmp")), &error));
    QVERIFY2(error.contains(QStringLiteral("use .png, .svg or .pdf")), qPrintable(error));
  }
};

QTEST_MAIN(TestSpeedupChart)
#include "test_speedup_chart.moc"
