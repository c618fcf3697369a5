#pragma once
// What the tests of hand-started workers share (test_torchrun, test_worker_slurm, test_srun): the small
// workload, a free loopback port, the launcher's 2-rank reference and the comparison with it.
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QtTest/QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wb/proto/rundir.h"

namespace wb_test {
using nlohmann::json;

inline const QStringList kWorkload = {QStringLiteral("data.limit_train=1280"), QStringLiteral("data.limit_val=256"),
                                      QStringLiteral("train.threads=1"), QStringLiteral("train.log_every=5"),
                                      QStringLiteral("seed=7")};

inline QStringList sets(const QStringList& kv) {
  QStringList out;
  for (const auto& s : kv) out << QStringLiteral("--set") << s;
  return out;
}

// A TCP port free on loopback now (the kernel's pick).
inline int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

inline json summaryOf(const QString& runDir) {
  auto s = wb::proto::readJsonFile(wb::proto::RunDir{runDir.toStdString()}.summary());
  return s.ok() ? *s : json();
}

inline QString textOf(QProcess& p) { return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()); }

// The summary of `workbench-cli run` with 2 ranks on kWorkload (plus `extra`) in `dir` (null when it failed).
inline json launcherTwoRanks(const QString& dir, const QStringList& extra = {}) {
  QProcess run;
  run.start(QStringLiteral(WB_CLI_PATH), QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir} +
                                             sets(kWorkload + QStringList{QStringLiteral("speedups.devices=2")} + extra));
  run.waitForFinished(240000);
  if (run.exitCode() == 0) return summaryOf(dir);
  qWarning("%s", qPrintable(textOf(run)));
  return json();
}

// Ranks started another way (b) trained to the launcher's result (a).
inline void compareToLauncher(const json& b, const json& a) {
  QVERIFY2(a.is_object(), "the launcher's 2-rank run failed");
  QCOMPARE(b.value("world_size", 0), 2);
  QCOMPARE(b.value("steps", -1), a.value("steps", -2));
  // Same data shards, same seed, same fixed threads, Gloo's sum of two: the same numbers.
  QCOMPARE(b.value("final_val_acc", -1.0), a.value("final_val_acc", -2.0));
  QVERIFY2(std::abs(b.value("best_val_loss", -1.0) - a.value("best_val_loss", -2.0)) <= 1e-6,
           qPrintable(QStringLiteral("val loss %1 vs %2 (launcher)")
                          .arg(b.value("best_val_loss", -1.0), 0, 'g', 10)
                          .arg(a.value("best_val_loss", -2.0), 0, 'g', 10)));
}

}  // namespace wb_test
