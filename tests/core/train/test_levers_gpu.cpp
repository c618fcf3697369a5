// The CUDA-only levers on a GPU: cuDNN autotune and TF32 matmuls are switched on in LibTorch's
// context and reported active in the `start` event; channels-last and the multi-tensor step train
// resnet18 on the GPU alongside them. Without CUDA every case skips, saying why.
#include <QtTest/QtTest>

#include "../../support/machine.h"

#include <filesystem>

#include <ATen/Context.h>

#include "trainer_test_util.h"
#include "wb/common/paths.h"
#include "../../support/machine_torch.h"

namespace fs = std::filesystem;

class TestLeversGpu : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingCuda());
    WB_NEED(wb::test::missingFashionMnist());
  }

  void cudaLeversAreOnAndSaySo() {
    wb::Config c = smallConfig();
    c.model.name = "resnet18";
    c.train.max_steps = 20;
    c.speedups.cudnn_benchmark = true;
    c.speedups.tf32 = true;
    c.speedups.channels_last = true;
    c.speedups.fused_optimizer = true;
    const Ran r = train(c);
    const auto starts = r.of("start");
    QVERIFY(!starts.empty());
    const json s = starts.front()["speedups"];
    for (const char* key : {"cudnn_benchmark", "tf32", "channels_last", "fused_optimizer"})
      QVERIFY2(s[key].value("active", false), s[key].dump().c_str());
    QVERIFY(at::globalContext().benchmarkCuDNN());
    QVERIFY(at::globalContext().allowTF32CuBLAS());
    QVERIFY(r.outcome.status == "ok");
  }
};

QTEST_APPLESS_MAIN(TestLeversGpu)
#include "test_levers_gpu.moc"
