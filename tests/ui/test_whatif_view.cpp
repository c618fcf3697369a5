// The Compare tab's early-stopping what-if: the baseline's validation curve replayed for each
// patience and min_delta (the stop epoch, the best epoch kept), the run's own setting in bold,
// and a run of one evaluation that says it cannot be replayed.
#include <QComboBox>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/whatif_view.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"

using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

// val_loss per epoch; epoch k ends at t = 10·k.
QByteArray curve(const std::vector<double>& losses) {
  QByteArray out;
  for (size_t i = 0; i < losses.size(); ++i) {
    const int epoch = int(i + 1);
    out += t::line(t::event("eval", {{"epoch", epoch}, {"step", epoch * 10}, {"t", 10.0 * epoch - 1},
                                     {"val_loss", losses[i]}, {"val_acc", 0.9 - losses[i]}, {"eval_ms", 100}}));
    out += t::line(t::event("epoch", {{"epoch", epoch}, {"t", 10.0 * epoch}, {"seconds", 10.0}}));
  }
  return out;
}

}  // namespace

class TestWhatIfView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void theBaselinesCurveIsReplayed() {
    auto root = t::scratchRoot();
    RunsModel model;
    // WB_GRAB_BASELINE=<run folder>: the picture shows that (real) run instead.
    const QString baseDir = qEnvironmentVariableIsSet("WB_GRAB_BASELINE")
                                ? qEnvironmentVariable("WB_GRAB_BASELINE")
                                : t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"),
                                                 curve({0.5, 0.4, 0.45, 0.42, 0.41, 0.43}), QStringLiteral("ok"));
    const QString oneDir = t::writeRunDir(root.path(), QStringLiteral("one-epoch"), QStringLiteral("one"), curve({0.5}),
                                          QStringLiteral("ok"));
    Run* base = Run::fromDirectory(baseDir);
    Run* one = Run::fromDirectory(oneDir);
    model.addRun(base), model.addRun(one);
    CompareView view(&model);
    model.setBaseline(base);
    model.setShown(one, true);
    view.refreshNow();
    const WhatIfView* w = view.whatIf();
    QVERIFY(w);
    const QTableWidget* table = w->table();
    QCOMPARE(w->runChooser()->count(), 2);
    if (!qEnvironmentVariableIsSet("WB_GRAB_BASELINE")) {
      QCOMPARE(table->rowCount(), 1 + 5 * 3);  // off, then patience 1..5 × min_delta 0, 0.001, 0.01
      const int stop = t::columnOf(table, QStringLiteral("Stops after epoch"));
      const int best = t::columnOf(table, QStringLiteral("Best epoch"));
      QVERIFY(stop >= 0 && best >= 0);
      QCOMPARE(table->item(1, stop)->text(), QStringLiteral("3"));  // patience 1, min_delta 0
      QCOMPARE(table->item(1, best)->text(), QStringLiteral("2"));
      QCOMPARE(table->item(0, stop)->text(), QStringLiteral("off: all 6"));
      QVERIFY(table->item(0, 0)->font().bold());   // the run's own setting: patience 0, min_delta 0
      QVERIFY(!table->item(1, 0)->font().bold());
      QCOMPARE(table->item(1, t::columnOf(table, QStringLiteral("Wall saved")))->text(), QStringLiteral("30.0 s"));
    }
    if (qEnvironmentVariableIsSet("WB_GRAB_DIR")) {
      auto* tabs = view.findChild<QTabWidget*>();
      for (auto* tw : view.findChildren<QTabWidget*>())
        if (tw->indexOf(const_cast<WhatIfView*>(w)) >= 0) tabs = tw;
      tabs->setCurrentWidget(const_cast<WhatIfView*>(w));
      view.resize(1280, 800);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      QTest::qWait(200);
      QVERIFY(view.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/whatif.png")));
    }
    // The one-epoch run says why there is no table.
    w->runChooser()->setCurrentIndex(1);
    QCOMPARE(table->rowCount(), 0);
    QVERIFY2(w->summary()->text().contains(QStringLiteral("has 1 evaluation: an early-stopping what-if needs at least 2")),
             qPrintable(w->summary()->text()));
    // A refresh keeps the run the user chose.
    view.refreshNow();
    QCOMPARE(w->runChooser()->currentIndex(), 1);
  }
};

QTEST_MAIN(TestWhatIfView)
#include "test_whatif_view.moc"
