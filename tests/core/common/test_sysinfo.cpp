// CPU accounting (wb/common/sysinfo.h): another process's load between two readings, and how far
// that figure can be off, which a short reading cannot hide.
#include <QtTest/QtTest>

#include <unistd.h>

#include "wb/common/sysinfo.h"

class TestSysinfo : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void otherCoresAreTheMachineLessThisProcess() {
    wb::CpuTimes a, b;
    a.wall = 10.0, b.wall = 11.0;
    a.machine_busy = 100.0, b.machine_busy = 101.5;  // 1.5 cores' worth over 1 s
    a.process = 5.0, b.process = 5.5;                // of which 0.5 were ours
    const wb::CpuShare s = wb::cpuShareBetween(a, b);
    QCOMPARE(s.process_cores, 0.5);
    QCOMPARE(s.other_cores, 1.0);
  }

  // /proc/stat counts in clock ticks, one per core at each end: over 10 ms the figure can be off
  // by cores ÷ (ticks a second × 0.01 s); over 1 s a hundredth of that.
  void theResolutionShrinksWithTheReading() {
    const double hz = double(::sysconf(_SC_CLK_TCK));
    wb::CpuTimes a, b;
    a.machine_busy = 1.0, b.machine_busy = 1.0;
    a.wall = 0.0, b.wall = 0.01;
    const double shortReading = wb::cpuShareBetween(a, b).resolution_cores;
    QCOMPARE(shortReading, wb::logicalCores() / (hz * 0.01));
    b.wall = 1.0;
    QCOMPARE(wb::cpuShareBetween(a, b).resolution_cores, shortReading / 100);
  }

  void aRealReadingHasBothFigures() {
    const wb::CpuTimes a = wb::readCpuTimes();
    ::usleep(50000);
    const wb::CpuShare s = wb::cpuShareBetween(a, wb::readCpuTimes());
    QVERIFY(s.seconds >= 0.05);
    QVERIFY(s.other_cores >= 0);
    QVERIFY(s.resolution_cores > 0);
  }
};

QTEST_GUILESS_MAIN(TestSysinfo)
#include "test_sysinfo.moc"
