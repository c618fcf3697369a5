#pragma once
// Multi-process test harness for wb_parallel: the test binary re-executes itself once per rank with
// WB_DIST_SCENARIO set and the torchrun environment (RANK, WORLD_SIZE, MASTER_ADDR, ...), waits
// for every rank within a limit (killing what is left: a test never hangs), and hands back each
// rank's exit code and output. WB_DIST_TEST_MAIN routes worker launches to a scenario function.
#include <QtCore/QDir>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wb/parallel/communicator.h"
#include "wb/parallel/env.h"

namespace wbtest {

using Env = std::map<QString, QString>;

struct RankRun {
  int exit_code = -1;
  bool timed_out = false;  // still running at the limit: killed
  QString out;
  QString err;
  qint64 ms = 0;           // from start until it exited (or was killed)
};

// The torchrun variables of one rank on this machine.
inline Env rankEnv(int rank, int world, int port) {
  return {{QStringLiteral("RANK"), QString::number(rank)},
          {QStringLiteral("WORLD_SIZE"), QString::number(world)},
          {QStringLiteral("LOCAL_RANK"), QString::number(rank)},
          {QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1")},
          {QStringLiteral("MASTER_PORT"), QString::number(port)}};
}

inline Env merged(Env a, const Env& b) {
  for (const auto& kv : b) a[kv.first] = kv.second;
  return a;
}

// Runs one worker process per entry of `envs`; waits up to limit_ms for all of them together.
inline std::vector<RankRun> runRanks(const QString& scenario, const std::vector<Env>& envs, int limit_ms,
                                     const QString& workdir) {
  const QString self = QFileInfo(QStringLiteral("/proc/self/exe")).symLinkTarget();
  std::vector<std::unique_ptr<QProcess>> procs;
  std::vector<RankRun> runs(envs.size());
  QElapsedTimer clock;
  clock.start();
  for (size_t i = 0; i < envs.size(); ++i) {
    auto env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
                          "SLURM_NTASKS", "SLURM_LOCALID", "WB_RUN_ID", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
                          "TORCHELASTIC_USE_AGENT_STORE"})
      env.remove(QString::fromLatin1(v));
    env.insert(QStringLiteral("WB_DIST_SCENARIO"), scenario);
    env.insert(QStringLiteral("WB_DIST_WORKDIR"), workdir);
    for (const auto& kv : envs[i]) env.insert(kv.first, kv.second);  // may override the scenario
    auto p = std::make_unique<QProcess>();
    p->setProcessEnvironment(env);
    p->setStandardOutputFile(workdir + QStringLiteral("/proc-%1.out").arg(i));
    p->setStandardErrorFile(workdir + QStringLiteral("/proc-%1.err").arg(i));
    p->start(self, {});
    procs.push_back(std::move(p));
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    auto& p = *procs[i];
    const int left = std::max<qint64>(1, limit_ms - clock.elapsed());
    if (!p.waitForFinished(left)) {
      runs[i].timed_out = true;
      p.kill();
      p.waitForFinished(5000);
    }
    runs[i].ms = clock.elapsed();
    runs[i].exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    auto slurp = [](const QString& path) {
      QFile f(path);
      return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    };
    runs[i].out = slurp(workdir + QStringLiteral("/proc-%1.out").arg(i));
    runs[i].err = slurp(workdir + QStringLiteral("/proc-%1.err").arg(i));
  }
  return runs;
}

// "key=value" lines a worker printed on stdout.
inline std::map<QString, QString> keyValues(const QString& out) {
  std::map<QString, QString> kv;
  for (const QString& line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
    const int eq = line.indexOf(QLatin1Char('='));
    if (eq > 0) kv[line.left(eq)] = line.mid(eq + 1);
  }
  return kv;
}

inline QString describe(const std::vector<RankRun>& runs) {
  QString s;
  for (size_t i = 0; i < runs.size(); ++i)
    s += QStringLiteral("[proc %1 exit %2%3 after %4 ms]\nstdout: %5\nstderr: %6\n")
             .arg(i)
             .arg(runs[i].exit_code)
             .arg(runs[i].timed_out ? QStringLiteral(" TIMED OUT") : QString())
             .arg(runs[i].ms)
             .arg(runs[i].out.right(1500), runs[i].err.right(3000));
  return s;
}

inline std::string workerEnv(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string(fallback);
}

// In a worker: this rank's communicator from the torchrun environment (Gloo; a collective with a
// dead peer gives up after 20 s).
inline wb::Result<std::unique_ptr<wb::parallel::Communicator>> joinFromEnvironment() {
  auto env = wb::parallel::DistEnv::fromEnvironment();
  if (!env) return env.error();
  wb::parallel::CommOptions options;
  options.timeout = std::chrono::seconds(20);
  return wb::parallel::Communicator::create(*env, options);
}

}  // namespace wbtest

// main(): worker mode when WB_DIST_SCENARIO is set, the Qt Test suite otherwise.
#define WB_DIST_TEST_MAIN(TestClass, scenarioFunction)                      \
  int main(int argc, char** argv) {                                         \
    if (const char* wb_scenario_ = std::getenv("WB_DIST_SCENARIO"))          \
      return scenarioFunction(std::string(wb_scenario_));                   \
    TestClass tc;                                                           \
    QTEST_SET_MAIN_SOURCE_PATH                                              \
    return QTest::qExec(&tc, argc, argv);                                   \
  }
