#pragma once
// What a test needs of this machine, asked of one place, so that a skip always says what was
// missing and how to get it: each missing*() is "" when the machine has it, else the QSKIP text.
//   WB_NEED(wb::test::missingFashionMnist());
#include <QFile>
#include <QString>
#include <QThread>

#include <fstream>
#include <string>

namespace wb::test {

// Where the default experiment's data is: $WB_FASHION_MNIST_DIR, else Debian's dataset-fashion-mnist
// (wb::defaultFashionMnistDir's rule, without linking wb_common).
inline QString fashionMnistDir() {
  const QString env = qEnvironmentVariable("WB_FASHION_MNIST_DIR");
  return env.isEmpty() ? QStringLiteral("/usr/share/datasets/fashion-mnist") : env;
}
inline bool haveFashionMnist() { return QFile::exists(fashionMnistDir() + QStringLiteral("/train-images-idx3-ubyte.gz")); }
inline QString missingFashionMnist() {
  return haveFashionMnist() ? QString()
                            : QStringLiteral("Fashion-MNIST is not installed in %1 (packaging/setup.sh installs dataset-fashion-mnist)")
                                  .arg(fashionMnistDir());
}

// At least `n` logical cores.
inline QString missingCores(int n) {
  const int here = QThread::idealThreadCount();
  return here >= n ? QString() : QStringLiteral("needs %1 cores; this machine has %2").arg(n).arg(here);
}

// A CPU feature flag of /proc/cpuinfo ("avx512_bf16", "amx_bf16").
inline bool cpuHasFlag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) return (line + " ").find(" " + flag + " ") != std::string::npos;
  return false;
}
inline QString missingCpuFlag(const std::string& flag) {
  return cpuHasFlag(flag) ? QString() : QStringLiteral("this CPU has no %1").arg(QString::fromStdString(flag));
}

// The slurm fixture's single-node cluster (tests/CMakeLists.txt): "" when it is up, else the
// fixture's own words for why not.
inline QString missingSlurm() {
  const QString dir = QString::fromLocal8Bit(qgetenv("WB_SLURM_DIR"));
  if (dir.isEmpty())
    return QStringLiteral("WB_SLURM_DIR is not set: run this test through ctest, whose slurm fixture starts the cluster");
  QFile why(dir + QStringLiteral("/unavailable"));
  if (why.open(QIODevice::ReadOnly)) return QStringLiteral("no Slurm cluster here: ") + QString::fromUtf8(why.readAll()).trimmed();
  if (!QFile::exists(dir + QStringLiteral("/slurm.conf")))
    return QStringLiteral("the slurm fixture wrote no %1/slurm.conf").arg(dir);
  return QString();
}

}  // namespace wb::test

// Skips the test, saying what was missing, when `missing` (a missing*() above) is not empty.
#define WB_NEED(missing)                                          \
  do {                                                            \
    const QString wbMissing_ = (missing);                         \
    if (!wbMissing_.isEmpty()) QSKIP(qPrintable(wbMissing_));     \
  } while (false)
