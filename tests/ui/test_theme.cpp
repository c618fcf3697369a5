// View → Theme with the window full: many runs listed and ticked (finished, failed, cancelled,
// contended, still running), a baseline, an open ladder, and every tab and sub-tab shown in
// turn. Each switch must repaint everything in the new palette (the live plots' legends held
// empty cells once the entries wrapped into columns, and recolouring them crashed the window).
#include <QDir>
#include <QTabWidget>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/speedup_chart.h"
#include "plots/live_plots.h"
#include "plots/qcp.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/proto/rundir.h"
#include "wb/ladder/ladder.h"
#include "window/main_window.h"
#include "window/theme.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

// A ladder of three steps (the Experiments tab's chart and Ladder table).
wb::ladder::Ladder smallLadder() {
  wb::ladder::Ladder l;
  l.target_acc = 0.7;
  wb::ladder::LadderRow base, workers, precision;
  base.step.key = "baseline", base.step.added = "all speedups off";
  base.repeats = base.reached = 1;
  base.wall_s = 20, base.target_s = 18, base.val_acc = 0.7, base.cumulative = 1, base.cumulative_target = 1;
  workers.step.key = "workers", workers.step.added = "loader workers 0 → 2";
  workers.repeats = workers.reached = 1;
  workers.wall_s = 15, workers.target_s = 14, workers.val_acc = 0.71, workers.cumulative = 1.33, workers.cumulative_target = 1.29;
  precision.step.key = "precision", precision.step.added = "precision bf16-mixed";
  precision.repeats = 1;
  precision.wall_s = 16, precision.val_acc = 0.6, precision.cumulative = 1.25;
  l.rows = {base, workers, precision};
  return l;
}

// Every tab of the window's views and, within each, every tab of its own tab widgets, shown in
// turn with the events processed; `each` runs on each.
template <typename F>
void forEveryTab(MainWindow& w, F&& each) {
  auto* views = w.findChild<QTabWidget*>(QStringLiteral("viewTabs"));
  QVERIFY(views);
  for (int v = 0; v < views->count(); ++v) {
    views->setCurrentIndex(v);
    QCoreApplication::processEvents();
    for (QTabWidget* inner : views->widget(v)->findChildren<QTabWidget*>()) {
      for (int i = 0; i < inner->count(); ++i) {
        inner->setCurrentIndex(i);
        QCoreApplication::processEvents();
        each(views->tabText(v) + QStringLiteral(" > ") + inner->tabText(i));
      }
    }
  }
}

// The legend entries of a plot are in the palette's text colour.
bool legendInks(QCustomPlot* plot, const QColor& ink) {
  for (int i = 0; i < plot->legend->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = plot->legend->item(i); item && item->textColor() != ink) return false;
  return true;
}

}  // namespace

class TestTheme : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void switchingThemeWithEveryTabShown_data() {
    QTest::addColumn<int>("theme");
    QTest::newRow("dark") << int(Theme::Dark);
    QTest::newRow("light") << int(Theme::Light);
    QTest::newRow("system") << int(Theme::System);
  }
  void switchingThemeWithEveryTabShown() {
    QFETCH(int, theme);
    auto root = t::scratchRoot();
    const QString baseDir = t::writeManyRuns(root.path());
    QVERIFY(QDir().mkpath(root.filePath(QStringLiteral("ladder"))));
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder/ladder.json")).toStdString(),
                                       wb::ladder::ladderJson(smallLadder())).ok());
    MainWindow w(t::windowOptions(root));
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    RunsModel* runs = w.runs();
    QCOMPARE(runs->rowCount(), 9);
    runs->setBaseline(runs->findByDir(baseDir));
    for (Run* r : runs->runs()) runs->setShown(r, true);
    QString error;
    QVERIFY2(w.experiments()->openLadder(root.filePath(QStringLiteral("ladder")), &error), qPrintable(error));
    w.plots()->syncAll();

    int switches = 0;
    forEveryTab(w, [&](const QString& tab) {
      w.setTheme(Theme(theme));
      QCoreApplication::processEvents();
      w.setTheme(theme == int(Theme::Dark) ? Theme::Light : Theme::Dark);
      QCoreApplication::processEvents();
      w.setTheme(Theme(theme));
      QCoreApplication::processEvents();
      w.plots()->flush(true);
      ++switches;
      const QColor ink = w.plots()->palette().color(QPalette::Text);
      for (const QString& key : w.plots()->tabKeys())
        QVERIFY2(legendInks(w.plots()->plot(key), ink), qPrintable(key + QStringLiteral(" legend after a switch on tab ") + tab));
    });
    QVERIFY(switches >= 11);  // the plots' 6, the Compare tab's 3, the Experiments tab's 2
    QCOMPARE(w.theme(), Theme(theme));
    // Every plot took the new palette.
    const QColor base = w.plots()->palette().color(QPalette::Base);
    for (const QString& key : w.plots()->tabKeys()) QCOMPARE(w.plots()->plot(key)->axisRect()->backgroundBrush().color(), base);
    QCOMPARE(w.compare()->chart()->plot()->axisRect()->backgroundBrush().color(), w.compare()->chart()->palette().color(QPalette::Base));
    QCOMPARE(w.experiments()->chart()->plot()->axisRect()->backgroundBrush().color(), w.experiments()->chart()->palette().color(QPalette::Base));
    QVERIFY(!w.experiments()->chart()->bars().bars.empty());
    w.setTheme(Theme::System);
  }
};

QTEST_MAIN(TestTheme)
#include "test_theme.moc"
