// The workbench-cli process driver on real child processes (/bin/sh scripts stand in for the
// launcher's behaviours that are hard to provoke on purpose: a line split across writes, a
// child that ignores SIGTERM, one that hangs). Each ends in exactly one finished().
#include <QtTest/QtTest>

#include <dirent.h>
#include <sys/ptrace.h>

#include <csignal>
#include <fstream>

#include "runs/run_process.h"
#include "ui_test_util.h"

using nlohmann::json;
using wb::ui::RunProcess;
Q_DECLARE_METATYPE(wb::ui::RunProcess::Outcome)

#include "../support/rank_processes.h"
#include "../support/machine.h"

namespace {
using wb::test::hang;
using wb::test::KillOnExit;
using wb::test::ranksOf;

struct Ended {
  int count = 0;
  RunProcess::Outcome outcome = RunProcess::Outcome::Failed;
  QString status, message;
};

void watch(RunProcess& p, Ended& e, std::vector<json>* events = nullptr) {
  QObject::connect(&p, &RunProcess::finished, &p, [&e](RunProcess::Outcome o, const QString& s, const QString& m) {
    ++e.count;
    e.outcome = o;
    e.status = s;
    e.message = m;
  });
  if (events) QObject::connect(&p, &RunProcess::eventReceived, &p, [events](const json& ev) { events->push_back(ev); });
}

QString sh() { return QStringLiteral("/bin/sh"); }

bool processGone(qint64 pid) {
  if (::kill(pid_t(pid), 0) != 0) return true;
  // A zombie waiting for its new parent to reap it is gone too.
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return true;
  const QByteArray s = stat.readAll();
  const int close = s.lastIndexOf(')');
  return close > 0 && s.mid(close + 2, 1) == "Z";
}

using wb::test::haveFashionMnist;

}  // namespace

class TestRunProcess : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { wb::ui::test::setUpEnvironment(); }

  void splitLinesAndExitCodes_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("outcome");
    QTest::addColumn<QString>("status");
    QTest::addColumn<int>("events");
    // One event written in two halves with a pause between, then garbage, then a complete end.
    QTest::newRow("partial line then end ok")
        << "printf '{\"type\":\"run\",\"v\":1,'; sleep 0.3; printf '\"rank\":0}\\nnot json\\n';"
           " printf '{\"type\":\"end\",\"status\":\"ok\",\"summary\":{}}\\n'"
        << int(RunProcess::Outcome::Succeeded) << "ok" << 2;
    QTest::newRow("last line without newline") << "printf '{\"type\":\"end\",\"status\":\"early-stopped\"}'"
                                               << int(RunProcess::Outcome::Succeeded) << "early-stopped" << 1;
    QTest::newRow("exit 130 is cancelled") << "exit 130" << int(RunProcess::Outcome::Cancelled) << "cancelled" << 0;
    QTest::newRow("exit 4 is diverged") << "exit 4" << int(RunProcess::Outcome::Failed) << "diverged" << 0;
    QTest::newRow("error event then exit 1")
        << "printf '{\"type\":\"error\",\"message\":\"data: no images under /x\"}\\n'; echo 'details' >&2; exit 1"
        << int(RunProcess::Outcome::Failed) << "failed" << 1;
  }
  void splitLinesAndExitCodes() {
    QFETCH(QString, script);
    QFETCH(int, outcome);
    QFETCH(QString, status);
    QFETCH(int, events);
    RunProcess p;
    Ended e;
    std::vector<json> got;
    watch(p, e, &got);
    p.start(sh(), {QStringLiteral("-c"), script});
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 20000);
    QCOMPARE(int(e.outcome), outcome);
    QCOMPARE(e.status, status);
    QCOMPARE(int(got.size()), events);
    if (status == QLatin1String("failed")) QCOMPARE(e.message, QStringLiteral("data: no images under /x"));
    QTest::qWait(100);
    QCOMPARE(e.count, 1);  // exactly once
  }

  void failedStartIsWords() {
    RunProcess p;
    Ended e;
    watch(p, e);
    p.start(QStringLiteral("/nonexistent/workbench-cli"), {QStringLiteral("run")});
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 10000);
    QCOMPARE(e.outcome, RunProcess::Outcome::Failed);
    QVERIFY2(e.message.startsWith(QStringLiteral("Could not start /nonexistent/workbench-cli")), qPrintable(e.message));
    QVERIFY(e.message.contains(QStringLiteral("WB_CLI")));
    QTest::qWait(100);
    QCOMPARE(e.count, 1);
  }

  void killedFromOutsideIsFailed() {
    RunProcess p;
    Ended e;
    watch(p, e);
    p.start(sh(), {QStringLiteral("-c"), QStringLiteral("sleep 30")});
    QTRY_VERIFY_WITH_TIMEOUT(p.processId() > 0, 10000);
    ::kill(pid_t(p.processId()), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 10000);
    QCOMPARE(e.outcome, RunProcess::Outcome::Failed);
    QVERIFY2(e.message.contains(QStringLiteral("killed by signal 9")), qPrintable(e.message));
  }

  void stopEscalatesToKillAndLeavesNoOrphan() {
    RunProcess p;
    p.setGracePeriodMs(300);
    Ended e;
    std::vector<json> got;
    watch(p, e, &got);
    // Ignores SIGTERM, and has a child of its own (as the launcher has ranks).
    p.start(sh(), {QStringLiteral("-c"),
                   QStringLiteral("trap '' TERM; sleep 60 & printf '{\"type\":\"child\",\"pid\":%d}\\n' $!; wait")});
    QTRY_COMPARE_WITH_TIMEOUT(int(got.size()), 1, 10000);
    const qint64 child = got[0]["pid"].get<qint64>();
    p.stop();
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 10000);
    QCOMPARE(e.outcome, RunProcess::Outcome::Cancelled);
    QVERIFY2(e.message.contains(QStringLiteral("grace")), qPrintable(e.message));
    QTRY_VERIFY_WITH_TIMEOUT(processGone(child), 5000);
  }

  void gracefulStopIsCancelled() {
    RunProcess p;
    Ended e;
    watch(p, e);
    // Like the launcher: on SIGTERM, write the end event and exit 130.
    p.start(sh(), {QStringLiteral("-c"),
                   QStringLiteral("trap 'printf \"{\\\"type\\\":\\\"end\\\",\\\"status\\\":\\\"cancelled\\\"}\\n\"; exit 130' TERM;"
                                  " while true; do sleep 0.1; done")});
    QTRY_VERIFY_WITH_TIMEOUT(p.processId() > 0, 10000);
    QTest::qWait(200);  // let the shell install its trap
    p.stop();
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 10000);
    QCOMPARE(e.outcome, RunProcess::Outcome::Cancelled);
    QCOMPARE(e.status, QStringLiteral("cancelled"));
    QCOMPARE(p.endStatus(), QStringLiteral("cancelled"));
  }

  void watchdogStopsAHungChild() {
    RunProcess p;
    p.setWatchdogMs(300);
    p.setGracePeriodMs(300);
    Ended e;
    watch(p, e);
    p.start(sh(), {QStringLiteral("-c"), QStringLiteral("sleep 30")});
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 10000);
    QCOMPARE(e.outcome, RunProcess::Outcome::Failed);
    QVERIFY2(e.message.contains(QStringLiteral("looked hung")), qPrintable(e.message));
  }

  // The window's Stop on a real 2-rank run with rank 1 hung (and so rank 0 waiting in a
  // collective, deaf to SIGTERM until the collective timeout): SIGTERM to the launcher, then SIGKILL to its group
  // after the grace period must end every rank; so must the launcher's death (SIGKILL from
  // outside: the window then kills the group too, and each rank dies with its launcher).
  void stopEndsEveryRankOfARealRun_data() {
    QTest::addColumn<bool>("killLauncher");
    QTest::newRow("stop: sigterm, grace, group kill") << false;
    QTest::newRow("launcher killed") << true;
  }
  void stopEndsEveryRankOfARealRun() {
    WB_NEED(wb::test::missingFashionMnist());
    QFETCH(bool, killLauncher);
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("stopped"));
    RunProcess p;
    p.setGracePeriodMs(1000);  // below the launcher's own 10 s: the window's kill comes first
    Ended e;
    std::vector<json> got;
    watch(p, e, &got);
    QStringList args{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout")};
    for (const char* kv : {"speedups.devices=2", "data.limit_train=20000", "data.limit_val=256", "train.epochs=3",
                           "train.log_every=1"})
      args << QStringLiteral("--set") << QString::fromLatin1(kv);
    p.start(wb::ui::test::cliPath(), args);
    auto stepSeen = [&] {
      for (const auto& ev : got)
        if (wb::proto::stringOr(ev, "type", "") == "step") return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(stepSeen() || e.count > 0, 300000);
    QCOMPARE(e.count, 0);
    KillOnExit guard{ranksOf(runDir.toStdString())};
    QCOMPARE(int(guard.pids.size()), 2);
    if (!hang(guard.pids[1])) qWarning("ptrace not allowed here: rank 1 is only SIGSTOPped");
    if (killLauncher) ::kill(pid_t(p.processId()), SIGKILL);
    else p.stop();
    QTRY_COMPARE_WITH_TIMEOUT(e.count, 1, 30000);
    for (pid_t rank : guard.pids)
      QTRY_VERIFY2_WITH_TIMEOUT(processGone(rank), qPrintable(QStringLiteral("rank pid %1 outlived the run").arg(rank)),
                                10000);
  }

  void destructorKillsTheGroup() {
    qint64 child = 0;
    {
      RunProcess p;
      std::vector<json> got;
      Ended e;
      watch(p, e, &got);
      p.start(sh(), {QStringLiteral("-c"), QStringLiteral("sleep 60 & printf '{\"type\":\"child\",\"pid\":%d}\\n' $!; wait")});
      QTRY_COMPARE_WITH_TIMEOUT(int(got.size()), 1, 10000);
      child = got[0]["pid"].get<qint64>();
    }
    QTRY_VERIFY_WITH_TIMEOUT(processGone(child), 5000);
  }
};

QTEST_MAIN(TestRunProcess)
#include "test_run_process.moc"
