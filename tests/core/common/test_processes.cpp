// The machine's processes: one reader of /proc/PID/stat, and who took the CPU between two
// snapshots (what a contended run names as the other load's source).
#include <QtTest/QtTest>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <set>

#include "wb/common/processes.h"
#include "../../support/busy_processes.h"

namespace {

wb::ProcessStat proc(int pid, int ppid, const char* comm, double cpu, long long start = 1) {
  wb::ProcessStat p;
  p.pid = pid, p.ppid = ppid, p.comm = comm, p.cpu_seconds = cpu, p.start_ticks = start, p.state = 'R';
  return p;
}

}  // namespace

class TestProcesses : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void readsThisProcess() {
    wb::ProcessStat self;
    QVERIFY(wb::readProcessStat(int(::getpid()), self));
    QCOMPARE(self.pid, int(::getpid()));
    QCOMPARE(self.ppid, int(::getppid()));
    QVERIFY(QByteArray("test_processes").startsWith(QByteArray::fromStdString(self.comm)));
    QVERIFY(self.cpu_seconds >= 0 && self.start_ticks > 0);
    QVERIFY(!self.dead());
    wb::ProcessStat gone;
    QVERIFY(!wb::readProcessStat(-1, gone));
    bool listed = false;
    for (const auto& p : wb::allProcesses()) listed = listed || p.pid == self.pid;
    QVERIFY(listed);
  }

  // A process that ends while /proc is read is no error: its files read as "" (the kernel fails a
  // read of a reaped process's file with ESRCH, which a C++ stream reading it whole threw as
  // "basic_filebuf::underflow error reading the file: No such process" and a ladder died of it).
  void aProcessThatEndsReadsAsNothing() {
    QVERIFY(QByteArray::fromStdString(wb::readProcessFile(int(::getpid()), "stat")).startsWith(QByteArray::number(::getpid())));
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    QVERIFY(child > 0);
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QCOMPARE(wb::readProcessFile(int(child), "cmdline"), std::string());
    wb::ProcessStat gone;
    QVERIFY(!wb::readProcessStat(int(child), gone));
    // Processes that come and go while every one is read: never an exception.
    for (int round = 0; round < 40; ++round) {
      const pid_t brief = ::fork();
      if (brief == 0) ::_exit(0);
      for (const auto& p : wb::allProcesses()) (void)wb::readProcessFile(p.pid, "cmdline");
      ::waitpid(brief, &status, 0);
    }
  }

  // Busiest first, at most `most`, under minCores left out; a run's own processes (the roots
  // given and everything below them) and this process are not "others".
  void busiestOthersLeavesOutOurs() {
    const int self = int(::getpid());
    const std::vector<wb::ProcessStat> before = {proc(100, 1, "stress-ng", 10), proc(200, 1, "python3", 5),
                                                 proc(300, 1, "rank", 0), proc(301, 300, "loader", 0),
                                                 proc(self, 1, "me", 0), proc(400, 1, "idle", 3)};
    const std::vector<wb::ProcessStat> after = {proc(100, 1, "stress-ng", 14), proc(200, 1, "python3", 6),
                                                proc(300, 1, "rank", 4), proc(301, 300, "loader", 4),
                                                proc(self, 1, "me", 4), proc(400, 1, "idle", 3.01),
                                                proc(500, 1, "make", 2)};
    const auto loads = wb::busiestOthers(before, after, 4.0, {300});
    QCOMPARE(int(loads.size()), 3);
    QCOMPARE(loads[0].name, std::string("stress-ng"));
    QCOMPARE(loads[0].cores, 1.0);
    QCOMPARE(loads[1].name, std::string("make"));  // started in between: counted from its start
    QCOMPARE(loads[1].cores, 0.5);
    QCOMPARE(loads[2].pid, 200);
    QCOMPARE(loads[2].cores, 0.25);
    QCOMPARE(int(wb::busiestOthers(before, after, 4.0, {300}, 1).size()), 1);
    QVERIFY(wb::busiestOthers(before, after, 0, {300}).empty());
    QCOMPARE(wb::describeLoads({loads[0], loads[2]}),
             std::string("stress-ng (pid 100) 1.0 cores, python3 (pid 200) 0.2 cores"));
    QCOMPARE(wb::describeLoads({}), std::string());
  }

  // The experiment a process belongs to: a process of the same program this one forked counts this
  // one as its experiment; this test, started by another program, is its own.
  void theExperimentIsTheTopmostOfTheSameProgram() {
    QCOMPARE(wb::experimentRoot(), int(::getpid()));
    int pipeFd[2];
    QVERIFY(::pipe(pipeFd) == 0);
    const pid_t child = ::fork();
    if (child == 0) {
      const int root = wb::experimentRoot();
      (void)!::write(pipeFd[1], &root, sizeof root);
      ::_exit(0);
    }
    int root = 0;
    QCOMPARE(::read(pipeFd[0], &root, sizeof root), ssize_t(sizeof root));
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(pipeFd[0]), ::close(pipeFd[1]);
    QCOMPARE(root, int(::getpid()));
  }

  // Real processes: a busy child of this process (a run of its own experiment, side by side) is
  // counted in the experiment's CPU and never named as other load; an unrelated busy process is
  // named, and not counted in the experiment's CPU. A child that ended and was reaped in between
  // stays counted (its time moved to this process's reaped children).
  void anExperimentsOwnRunsAreNotOtherLoad() {
    int subreaper = 0;
    ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
    if (subreaper) QSKIP("this test process is a child subreaper: an orphan would be re-parented to it");
    const int root = wb::experimentRoot();
    const auto before = wb::allProcesses();
    const auto start = std::chrono::steady_clock::now();
    const pid_t ours = wb::test::ownBusyChild();
    const pid_t ended = wb::test::ownBusyChild(true);
    int status = 0;
    QCOMPARE(::waitpid(ended, &status, 0), ended);
    const pid_t other = wb::test::unrelatedBusyProcess();
    QVERIFY(ours > 0 && other > 0);
    const auto after = wb::allProcesses();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    wb::test::endProcess(ours, true);
    wb::test::endProcess(other, false);

    const std::set<int> family = wb::familyOf({root}, after);
    QVERIFY(family.count(int(ours)));
    QVERIFY(!family.count(int(other)));
    // Both children burnt 0.3 s each (to the clock tick); the unrelated one's 0.3 s is not ours.
    const double experimentCpu = wb::familyCpuSeconds(root, after) - wb::familyCpuSeconds(root, before);
    QVERIFY2(experimentCpu >= 0.55, qPrintable(QString::number(experimentCpu)));
    const auto loads = wb::busiestOthers(before, after, seconds, {}, 1000, 0.0);
    bool otherNamed = false;
    for (const wb::ProcessLoad& l : loads) {
      QVERIFY2(l.pid != int(ours) && l.pid != int(::getpid()), qPrintable(QString::number(l.pid)));
      otherNamed = otherNamed || l.pid == int(other);
    }
    QVERIFY(otherNamed);
  }

  // A pid reused by a new process (another start time) counts from the new one's start, not as
  // the difference from the old one's time.
  void aReusedPidCountsFromItsStart() {
    const auto loads = wb::busiestOthers({proc(700, 1, "old", 100, 5)}, {proc(700, 1, "new", 1, 9)}, 2.0, {});
    QCOMPARE(int(loads.size()), 1);
    QCOMPARE(loads[0].name, std::string("new"));
    QCOMPARE(loads[0].cores, 0.5);
  }
};

QTEST_APPLESS_MAIN(TestProcesses)
#include "test_processes.moc"
