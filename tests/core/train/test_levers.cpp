// The levers past the recipe's six, in the trainer, on real Fashion-MNIST:
//  - every speedup of the table is in the `start` event, with what it did here; the CUDA-only
//    ones asked for on a CPU say "not available: needs CUDA" and stay inactive;
//  - channels-last lays the convolutions' weights and the input batches out NHWC and trains to
//    the same accuracy (within a point: only the summation order differs);
//  - 4 accumulated micro-batches of 16 train the weights one batch of 64 trains (no dropout: mlp),
//    in the same number of optimiser steps.
#include <QtTest/QtTest>

#include "../../support/machine.h"

#include <filesystem>

#include "trainer_test_util.h"
#include "wb/common/paths.h"
#include "wb/common/speedups.h"
#include "wb/model/model.h"
#include "wb/train/batch_copy.h"
#include "wb/train/checkpoint.h"
#include "wb/train/memory_format.h"

namespace fs = std::filesystem;

namespace {

json startSpeedups(const Ran& r) {
  const auto starts = r.of("start");
  return starts.empty() ? json::object() : starts.front().value("speedups", json::object());
}

double bestAcc(const Ran& r) {
  double best = 0;
  for (const auto& e : r.of("eval")) best = std::max(best, e.value("val_acc", 0.0));
  return best;
}

double maxDiff(const wb::model::NamedTensors& a, const wb::model::NamedTensors& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i].second - b[i].second).abs().max().item<double>());
  return m;
}

}  // namespace

class TestLevers : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingFashionMnist());
  }

  void everySpeedupIsInTheStartEvent() {
    wb::Config c = smallConfig();
    c.train.max_steps = 3;
    c.speedups.cudnn_benchmark = true;
    c.speedups.tf32 = true;
    c.speedups.fused_optimizer = true;
    const Ran r = train(c);
    const json s = startSpeedups(r);
    for (const wb::Speedup& sp : wb::speedupTable()) QVERIFY2(s.contains(sp.key), sp.key);
    QCOMPARE(s["fused_optimizer"].value("active", false), true);
    QCOMPARE(s["channels_last"].value("requested", true), false);
    if (torch::cuda::is_available()) QSKIP("the CUDA levers' CPU words are checked on a machine without CUDA");
    for (const char* key : {wb::speedup::kCudnnBenchmark, wb::speedup::kTf32}) {
      QCOMPARE(s[key].value("requested", false), true);
      QCOMPARE(s[key].value("active", true), false);
      QVERIFY2(s[key].value("note", std::string()).rfind("not available: needs CUDA", 0) == 0, s[key].dump().c_str());
    }
  }

  void channelsLastLaysOutWeightsAndInputs() {
    auto net = wb::model::createModel({"lenet", 1, 10, 28});
    QVERIFY(net.ok());
    QCOMPARE(wb::train::layOutChannelsLast(**net), int64_t{2});  // conv1, conv2
    for (const auto& [name, p] : (*net)->namedParameters()) {
      if (p.dim() != 4) continue;
      QVERIFY2(p.is_contiguous(at::MemoryFormat::ChannelsLast), name.c_str());
      if (p.size(1) > 1) QVERIFY2(!p.is_contiguous(), name.c_str());  // one input channel: both layouts at once
    }
    wb::train::BatchCopier copier(torch::kCPU, false, /*channelsLast=*/true);
    auto [x, y] = copier.toDevice(torch::rand({4, 1, 28, 28}).expand({4, 3, 28, 28}).contiguous(), torch::zeros({4}, torch::kLong));
    QVERIFY(x.is_contiguous(at::MemoryFormat::ChannelsLast) && !x.is_contiguous());
    auto mlp = wb::model::createModel({"mlp", 1, 10, 28});
    QCOMPARE(wb::train::layOutChannelsLast(**mlp), int64_t{0});
  }

  void channelsLastTrainsToTheSameAccuracy() {
    wb::Config c = smallConfig();
    const Ran plain = train(c);
    c.speedups.channels_last = true;
    const Ran nhwc = train(c);
    const json s = startSpeedups(nhwc);
    QCOMPARE(s["channels_last"].value("active", false), true);
    QVERIFY2(s["channels_last"].value("note", std::string()).find("NHWC") != std::string::npos, s.dump().c_str());
    const double a = bestAcc(plain), b = bestAcc(nhwc);
    QVERIFY(a > 0.5);
    QVERIFY2(std::abs(a - b) < 0.01, qPrintable(QStringLiteral("val acc %1 vs %2 channels-last").arg(a).arg(b)));
  }

  void accumulatedMicroBatchesTrainLikeOneBatch() {
    QTemporaryDir whole, micro;
    wb::Config c = smallConfig();
    c.model.name = "mlp";  // no dropout: the two runs draw nothing at random during training
    c.optim.name = "sgd";
    c.optim.lr = 0.05;
    c.optim.momentum = 0.5;
    c.data.limit_train = 1024;
    c.data.limit_val = 256;
    c.train.batch_size = 64;
    const Ran a = train(c, whole.path().toStdString());
    c.train.batch_size = 16;
    c.speedups.grad_accumulation = 4;
    const Ran b = train(c, micro.path().toStdString());
    QVERIFY2(startSpeedups(b)["grad_accumulation"].value("note", std::string()).find("an effective batch of 64") != std::string::npos,
             startSpeedups(b).dump().c_str());
    auto ca = wb::train::loadCheckpoint(whole.path().toStdString() + "/checkpoints/last.pt");
    auto cb = wb::train::loadCheckpoint(micro.path().toStdString() + "/checkpoints/last.pt");
    QVERIFY(ca.ok() && cb.ok());
    QCOMPARE(cb->global_step, ca->global_step);  // 16 optimiser steps of 64 samples each
    QCOMPARE(ca->global_step, int64_t{16});
    const double diff = maxDiff(ca->params, cb->params);
    QVERIFY2(diff < 1e-5, qPrintable(QStringLiteral("max |4 x 16 - 64| = %1").arg(diff)));
  }
};

QTEST_APPLESS_MAIN(TestLevers)
#include "test_levers.moc"
