// A busy machine in words a user can act on: how much load the contended runs met, from which
// processes, and what it takes for them to count.
#include <QtTest/QtTest>

#include "wb/advice/busy_machine.h"

using wb::compare::Contention;

namespace {

Contention contended(double other, std::vector<wb::ProcessLoad> busiest) {
  Contention c;
  c.contended = true;
  c.other_load_cores = other;
  c.cores = 2;
  c.busiest_others = std::move(busiest);
  return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestBusyMachine : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Only the contended runs count; each process once, at the most it took in any run.
  void theContendedRunsAreSummedUp() {
    const Contention a = contended(1.2, {{812, "stress-ng", 1.0}, {90, "python3", 0.2}});
    const Contention b = contended(0.9, {{812, "stress-ng", 0.7}, {77, "make", 0.4}});
    Contention quiet;
    quiet.other_load_cores = 0.1;
    const auto busy = wb::advice::busyMachineOf({&a, &quiet, &b});
    QCOMPARE(busy.runs, 2);
    QCOMPARE(busy.most_other_cores, 1.2);
    QCOMPARE(busy.cores, 2);
    QCOMPARE(int(busy.busiest_others.size()), 3);
    QCOMPARE(busy.busiest_others[0].pid, 812);
    QCOMPARE(busy.busiest_others[0].cores, 1.0);
    QCOMPARE(busy.busiest_others[1].name, std::string("make"));

    const std::string advice = wb::advice::busyMachineAdvice(busy);
    for (const char* part : {"2 runs were measured", "up to 1.2 of 2 cores", "busiest: stress-ng (pid 812) 1.0 cores",
                             "under 0.3 cores", "slowed alike", "kill -STOP 812 77 90", "kill -CONT 812 77 90",
                             "idle", "--exclusive"})
      QVERIFY2(has(advice, part), (std::string(part) + " not in: " + advice).c_str());
  }

  // A run beside its own experiment's runs (a try's runs side by side) shared the cores with them:
  // that load is theirs, not another process's, so no process is named or to be paused, and the
  // advice is to run them one at a time. Its speed still is not the machine's: no speedup.
  void aRunBesideItsOwnRunsSharedTheCores() {
    wb::records::CpuUse beside;
    beside.cores = 2;
    beside.other_load_cores = 0.1;
    beside.shared_cores = 1.0;
    beside.shared = true;
    const Contention c = wb::compare::contentionOf(beside);
    QVERIFY(c.contended && c.shared && !c.byOthers());
    QVERIFY2(has(c.note, "it shared the cores with its experiment's other runs (1.0 of 2 cores beside it)"), c.note.c_str());
    QVERIFY2(!has(c.note, "another process"), c.note.c_str());
    const auto busy = wb::advice::busyMachineOf({&c});
    QCOMPARE(busy.runs, 0);
    QCOMPARE(busy.shared_runs, 1);
    const std::string advice = wb::advice::busyMachineAdvice(busy);
    QVERIFY2(has(advice, "1 run shared the cores with their own experiment's other runs (up to 1.0 of 2 cores beside them)"),
             advice.c_str());
    QVERIFY2(has(advice, "one at a time") && !has(advice, "kill -STOP") && !has(advice, "measured while"), advice.c_str());

    // Beside its own runs and under another process's load: each is said for what it is.
    wb::records::CpuUse both = beside;
    both.other_load_cores = 0.8;
    both.contended = true;
    both.busiest_others = {{812, "stress-ng", 0.8}};
    const Contention d = wb::compare::contentionOf(both);
    QVERIFY(d.byOthers());
    const std::string mixed = wb::advice::busyMachineAdvice(wb::advice::busyMachineOf({&c, &d}));
    for (const char* part : {"1 run was measured while other processes used up to 0.8 of 2 cores", "kill -STOP 812,",
                             "2 runs shared the cores with their own experiment's other runs"})
      QVERIFY2(has(mixed, part), (std::string(part) + " not in: " + mixed).c_str());
  }

  void nothingToSayWithoutContention() {
    Contention quiet;
    QVERIFY(wb::advice::busyMachineAdvice(wb::advice::busyMachineOf({&quiet})).empty());
  }

  // Runs written before the launcher named the processes still get the load and the remedy,
  // without a pause command for processes it does not know.
  void unknownProcessesStillGetAnAnswer() {
    const Contention old = contended(0.8, {});
    const std::string advice = wb::advice::busyMachineAdvice(wb::advice::busyMachineOf({&old}));
    QVERIFY2(has(advice, "1 run was measured while other processes used up to 0.8 of 2 cores: their speedups are not shown."), advice.c_str());
    QVERIFY2(!has(advice, "kill -STOP") && has(advice, "run when the machine is idle"), advice.c_str());
  }
};

QTEST_APPLESS_MAIN(TestBusyMachine)
#include "test_busy_machine.moc"
