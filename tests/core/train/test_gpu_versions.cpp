// The CUDA and NCCL figures: CUDART_VERSION as text, NCCL reported only in a build that has it,
// and what this build's capabilities and versions say about both.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "wb/common/speedups.h"
#include "wb/proto/capabilities_record.h"
#include "wb/parallel/communicator.h"
#include "wb/proto/capability_keys.h"
#include "wb/train/machine_capabilities.h"
#include "wb/train/gpu_versions.h"

class TestGpuVersions : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cudaVersionText_data() {
    QTest::addColumn<int>("cudart");
    QTest::addColumn<QString>("text");
    QTest::newRow("13.0 (PyTorch 2.11's)") << 13000 << QStringLiteral("13.0");
    QTest::newRow("12.4 (Debian 13's)") << 12040 << QStringLiteral("12.4");
    QTest::newRow("11.8") << 11080 << QStringLiteral("11.8");
    QTest::newRow("12.10") << 12100 << QStringLiteral("12.10");
    QTest::newRow("no CUDA runtime") << 0 << QString();
  }
  void cudaVersionText() {
    QFETCH(int, cudart);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(wb::train::cudaVersionText(cudart)), text);
  }

  void ncclOnlyInABuildWithNccl_data() {
    QTest::addColumn<bool>("built");
    QTest::addColumn<bool>("device");
    QTest::addColumn<bool>("available");
    QTest::newRow("NCCL build, GPU") << true << true << true;
    QTest::newRow("CUDA LibTorch without nccl.h, GPU") << false << true << false;
    QTest::newRow("NCCL build, no GPU") << true << false << false;
    QTest::newRow("CPU build") << false << false << false;
  }
  void ncclOnlyInABuildWithNccl() {
    QFETCH(bool, built);
    QFETCH(bool, device);
    QFETCH(bool, available);
    QCOMPARE(wb::train::ncclAvailable(built, device), available);
  }

  void thisBuildsFigures() {
    namespace k = wb::proto::caps;
#if defined(WB_WITH_CUDA)
    QVERIFY2(wb::train::cudaRuntimeVersionOfBuild() >= 11000, "a CUDA build knows its CUDART_VERSION");
#else
    QCOMPARE(wb::train::cudaRuntimeVersionOfBuild(), 0);
    QVERIFY(!wb::parallel::ncclCompiled());
#endif
    const bool cuda = torch::cuda::is_available();
    const auto caps = wb::train::capabilitiesJson();
    const auto versions = wb::train::versionsJson();
    QCOMPARE(caps[k::kNccl].get<bool>(), wb::parallel::ncclCompiled() && cuda);
    // The writer's document, typed: every speedup of the table has its entry.
    const wb::proto::Capabilities typed = wb::proto::capabilitiesFromJson(caps);
    QCOMPARE(typed.cuda, cuda);
    QVERIFY(typed.cores >= 1);
    for (const wb::Speedup& s : wb::speedupTable()) QVERIFY2(typed.speedup(s.key), s.key);
    QCOMPARE(typed.available(wb::speedup::kPinMemory), cuda);
    QVERIFY(typed.value(wb::speedup::kPrecision, "bf16-mixed") && typed.value(wb::speedup::kPrecision, "bf16-mixed")->native);
    QCOMPARE(versions["nccl"].get<std::string>().empty(), !(wb::parallel::ncclCompiled() && cuda));
    if (cuda) {
      // "13.0", never the "available" a missing CUDA_VERSION used to leave
      QVERIFY2(QString::fromStdString(versions["cuda"].get<std::string>()).contains(QRegularExpression(QStringLiteral("^\\d+\\.\\d+$"))),
               versions.dump().c_str());
    } else {
      QCOMPARE(versions["cuda"].get<std::string>(), std::string());  // as the CPU build
    }
  }
};

QTEST_APPLESS_MAIN(TestGpuVersions)
#include "test_gpu_versions.moc"
