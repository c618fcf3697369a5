// A run folder written by the Python recorder (app/python/workbench_recorder, driven by
// tests/app/python/fake_loop.py, standard library only) in the window's run history: listed with
// its name, status and figures, and its curves and step split drawn like any run's.
#include <QtTest/QtTest>

#include "../app/python/python_util.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"

using namespace wb::ui;
namespace t = wb::ui::test;

class TestRecorderHistory : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    t::setUpEnvironment();
    WB_NEED(wb::test::missingPython3());
  }

  void recordedRunAppearsLikeAnyRun() {
    auto root = t::scratchRoot();
    const auto r = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/fake_loop.py"),
                                        root.filePath(QStringLiteral("20260105-000000-python-0001")),
                                        QStringLiteral("--name"), QStringLiteral("my own loop")});
    QVERIFY2(r.rc == 0, r.describe().constData());

    RunsModel model;
    RunHistory history(&model);
    history.setRoot(root.path());
    QCOMPARE(model.rowCount(), 1);
    Run* run = model.runAt(0);
    QCOMPARE(run->name(), QStringLiteral("my own loop"));
    QCOMPARE(run->status(), RunStatus::Ok);
    QCOMPARE(run->bestValAcc(), 0.8);
    QVERIFY(run->trainSamplesPerSecond() > 0);
    QVERIFY(!history.isFollowing(run));  // finished: summary.json is there

    model.setShown(run, true);
    QCOMPARE(int(run->series().steps().size()), 12);
    QCOMPARE(int(run->series().evals().size()), 3);
    const auto split = run->meanStepTimes();
    QVERIFY(split.has_value());
    QVERIFY2(split->data > 1.0 && split->fwd > 2.0, qPrintable(QStringLiteral("data %1 fwd %2").arg(split->data).arg(split->fwd)));
    QVERIFY(split->total() > split->data + split->fwd - 1e-9);
  }
};

QTEST_MAIN(TestRecorderHistory)
#include "test_recorder_history.moc"
