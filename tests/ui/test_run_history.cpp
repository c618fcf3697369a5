// History: run directories under the runs root appear in the list, and a growing events.jsonl
// is followed live. The reader survives a partial last line, unknown fields and event types, and
// a file that is truncated (rewritten) under it.
#include <QtTest/QtTest>

#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/proto/cluster_jobs.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

class TestRunHistory : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void finishedRunsAppearWithTheirSummary() {
    auto root = t::scratchRoot();
    QByteArray events = t::line(t::startEvent(10)) + t::line(t::stepEvent(1, 2.0)) +
                        t::line(t::event("eval", {{"epoch", 1}, {"step", 10}, {"val_loss", 0.9}, {"val_acc", 0.71}})) +
                        t::line(t::endEvent("ok", {{"best_val_acc", 0.71}}));
    t::writeRunDir(root.path(), QStringLiteral("20260101-000000-a-0001"), QStringLiteral("older"), events, QStringLiteral("ok"));
    t::writeRunDir(root.path(), QStringLiteral("20260102-000000-b-0002"), QStringLiteral("newer"), events,
                   QStringLiteral("early-stopped"));
    QDir().mkpath(root.filePath(QStringLiteral("not-a-run")));  // no config.json/events.jsonl: ignored

    RunsModel model;
    RunHistory history(&model);
    history.setRoot(root.path());
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.runAt(0)->name(), QStringLiteral("newer"));  // newest first
    QCOMPARE(model.runAt(0)->status(), RunStatus::EarlyStopped);
    QCOMPARE(model.runAt(1)->status(), RunStatus::Ok);
    QCOMPARE(model.runAt(1)->bestValAcc(), 0.8);  // summary.json
    QVERIFY(!history.isFollowing(model.runAt(0)));
    // Events are read when the run is drawn.
    QVERIFY(model.runAt(1)->series().steps().empty());
    model.setShown(model.runAt(1), true);
    QCOMPARE(int(model.runAt(1)->series().steps().size()), 1);
    QCOMPARE(int(model.runAt(1)->series().evals().size()), 1);
    QCOMPARE(model.runAt(1)->status(), RunStatus::Ok);

    // A new run directory (a CLI run) shows up without a restart; a deleted one goes.
    t::writeRunDir(root.path(), QStringLiteral("20260103-000000-c-0003"), QStringLiteral("cli run"), events, QStringLiteral("ok"));
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 3, 10000);
    QCOMPARE(model.runAt(0)->name(), QStringLiteral("cli run"));
    QVERIFY(QDir(root.filePath(QStringLiteral("20260101-000000-a-0001"))).removeRecursively());
    QCOMPARE(history.rescan(), 0);
    QCOMPARE(model.rowCount(), 2);
  }

  void followsAGrowingFile() {
    auto root = t::scratchRoot();
    // A partial last line (the writer is mid-record) and an unknown type with unknown fields.
    const QByteArray whole = t::line(t::stepEvent(2, 1.8));
    QByteArray events = t::line(t::startEvent(100, "cpu")) + t::line(t::stepEvent(1, 2.0)) +
                        t::line(t::event("hologram", {{"shimmer", {{"x", 1}}}})) + whole.left(whole.size() / 2);
    const QString dir = t::writeRunDir(root.path(), QStringLiteral("20260101-000000-live-0001"), QStringLiteral("live"), events);

    RunsModel model;
    RunHistory history(&model);
    history.setPollIntervalMs(50);
    history.setRoot(root.path());
    QCOMPARE(model.rowCount(), 1);
    Run* run = model.runAt(0);
    QVERIFY(history.isFollowing(run));
    QCOMPARE(run->status(), RunStatus::Running);
    QCOMPARE(int(run->series().steps().size()), 1);  // the half line waits
    QSignalSpy appended(run, &Run::dataAppended);

    // The rest of the line, with an unknown field inside a known event.
    json step3 = t::stepEvent(3, 1.6);
    step3["future_field"] = {{"nested", true}};
    QVERIFY(t::writeFile(dir + QStringLiteral("/events.jsonl"), whole.mid(whole.size() / 2) + t::line(step3),
                         QIODevice::Append));
    QTRY_COMPARE_WITH_TIMEOUT(int(run->series().steps().size()), 3, 10000);
    QVERIFY(appended.count() >= 1);
    QCOMPARE(run->series().steps()[1].loss, 1.8);
    QCOMPARE(run->series().steps()[2].loss, 1.6);
    QCOMPARE(run->series().steps()[2].epoch, 0.03);  // step / steps_per_epoch
    QCOMPARE(run->progress(), 0.03);

    // Truncated and rewritten under the reader: the curve starts over, nothing is doubled.
    QVERIFY(t::writeFile(dir + QStringLiteral("/events.jsonl"), t::line(t::startEvent(100)) +
                                                                    t::line(t::stepEvent(1, 2.5))));
    QTRY_COMPARE_WITH_TIMEOUT(int(run->series().steps().size()), 1, 10000);
    QCOMPARE(run->series().steps()[0].loss, 2.5);

    // The end event ends the following, with the status it names.
    QVERIFY(t::writeFile(dir + QStringLiteral("/events.jsonl"),
                         t::line(t::event("error", {{"message", "rank 1: out of memory"}, {"code", "internal"}})) +
                             t::line(t::endEvent("failed", {{"error", "rank 1: out of memory"}})),
                         QIODevice::Append));
    QTRY_COMPARE_WITH_TIMEOUT(run->status(), RunStatus::Failed, 10000);
    QCOMPARE(run->errorMessage(), QStringLiteral("rank 1: out of memory"));
    QTRY_VERIFY_WITH_TIMEOUT(!history.isFollowing(run), 10000);
  }

  void summaryWithoutEndEventDecides() {
    auto root = t::scratchRoot();
    const QString dir = t::writeRunDir(root.path(), QStringLiteral("20260101-000000-x-0001"), QStringLiteral("x"),
                                       t::line(t::stepEvent(1, 2.0)) + QByteArray("{\"type\":\"step\",\"trunc"));
    RunsModel model;
    RunHistory history(&model);
    history.setPollIntervalMs(50);
    history.setRoot(root.path());
    Run* run = model.runAt(0);
    QVERIFY(history.isFollowing(run));
    QVERIFY(t::writeFile(dir + QStringLiteral("/summary.json"), "{\"status\":\"cancelled\",\"name\":\"x\"}"));
    QTRY_COMPARE_WITH_TIMEOUT(run->status(), RunStatus::Cancelled, 10000);
    QCOMPARE(int(run->series().steps().size()), 1);  // the truncated tail was skipped, not fatal
  }

  void quietRunReadsIncomplete() {
    auto root = t::scratchRoot();
    t::writeRunDir(root.path(), QStringLiteral("20260101-000000-q-0001"), QStringLiteral("q"), t::line(t::stepEvent(1, 2.0)));
    RunsModel model;
    RunHistory history(&model);
    history.setPollIntervalMs(50);
    history.setQuietAfterSeconds(0.2);
    history.setRoot(root.path());
    QTRY_COMPARE_WITH_TIMEOUT(model.runAt(0)->status(), RunStatus::Incomplete, 10000);
    QVERIFY(history.isFollowing(model.runAt(0)));  // still followed: it may resume
  }

  // Runs sent to a Slurm cluster as an array: each shows its job's id and state while the job
  // holds it; a run Slurm ended before its summary fails in Slurm's words.
  void aRunItsClusterJobHoldsShowsTheJob() {
    auto root = t::scratchRoot();
    const QString waiting = t::writeRunDir(root.path(), QStringLiteral("aa-1"), QStringLiteral("a"), QByteArray());
    const QString killed = t::writeRunDir(root.path(), QStringLiteral("aa-2"), QStringLiteral("b"), t::line(t::stepEvent(1, 2.0)));
    QVERIFY(wb::proto::recordClusterTasks(root.filePath(QStringLiteral("slurm")).toStdString(),
                                          {{waiting.toStdString(), "5_0", "PENDING", "Priority", ""},
                                           {killed.toStdString(), "5_1", "TIMEOUT", "TimeLimit", ""}})
                .ok());
    RunsModel model;
    RunHistory history(&model);
    history.setPollIntervalMs(50);
    history.setQuietAfterSeconds(0.2);
    history.setRoot(root.path());
    QCOMPARE(model.rowCount(), 2);
    Run* a = model.findByDir(waiting);
    Run* b = model.findByDir(killed);
    QVERIFY(a && b);
    QTRY_COMPARE_WITH_TIMEOUT(a->status(), RunStatus::Queued, 10000);  // pending, not "incomplete"
    QCOMPARE(model.data(model.index(model.rowOf(a), RunsModel::ColStatus), Qt::DisplayRole).toString(),
             QStringLiteral("pending · job 5_0"));
    QVERIFY(model.data(model.index(model.rowOf(a), RunsModel::ColStatus), Qt::ToolTipRole).toString().contains(QStringLiteral("Priority")));
    QCOMPARE(b->status(), RunStatus::Failed);
    QVERIFY2(b->errorMessage().contains(QStringLiteral("Slurm ended job 5_1: TIMEOUT (TimeLimit)")), qPrintable(b->errorMessage()));
    // The job runs: the row says so, and follows the events it writes.
    QVERIFY(wb::proto::recordClusterTasks(root.filePath(QStringLiteral("slurm")).toStdString(),
                                          {{waiting.toStdString(), "5_0", "RUNNING", "None", ""}})
                .ok());
    QTRY_COMPARE_WITH_TIMEOUT(a->status(), RunStatus::Running, 10000);
    QCOMPARE(model.data(model.index(model.rowOf(a), RunsModel::ColStatus), Qt::DisplayRole).toString(),
             QStringLiteral("running · job 5_0"));
  }

  void opensARunDirectoryFromElsewhere() {
    auto root = t::scratchRoot();
    auto elsewhere = t::scratchRoot();
    const QString dir = t::writeRunDir(elsewhere.path(), QStringLiteral("from-cluster"), QStringLiteral("cluster run"),
                                       t::line(t::stepEvent(1, 2.0)), QStringLiteral("ok"));
    RunsModel model;
    RunHistory history(&model);
    history.setRoot(root.path());
    QString err;
    QVERIFY(!history.openDirectory(root.path(), &err));
    QVERIFY2(err.contains(QStringLiteral("not a run directory")), qPrintable(err));
    Run* run = history.openDirectory(dir, &err);
    QVERIFY(run);
    QCOMPARE(run->name(), QStringLiteral("cluster run"));
    QCOMPARE(history.openDirectory(dir), run);  // not listed twice
    QCOMPARE(model.rowCount(), 1);
  }
};

QTEST_MAIN(TestRunHistory)
#include "test_run_history.moc"
