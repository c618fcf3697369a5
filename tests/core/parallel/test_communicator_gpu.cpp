// NCCL on a GPU at world size 1 (NCCL refuses two ranks on one GPU): the rendezvous, the metric
// helpers and a ZeRO-2 step (native reduce-scatter + all-gather) on CUDA. Skips with the reason
// where this build has no NCCL or the machine no CUDA device.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "wb/parallel/communicator.h"
#include "wb/parallel/data_parallel.h"
#include "../../support/machine_torch.h"

class TestCommunicatorGpu : public QObject {
  Q_OBJECT
 private:
  std::unique_ptr<wb::parallel::Communicator> comm_;

 private Q_SLOTS:
  void init() {
    if (!wb::parallel::ncclCompiled())
      QSKIP("wb_parallel was built without NCCL (this LibTorch has no CUDA/NCCL): the NCCL path cannot run here");
    WB_NEED(wb::test::missingCuda());
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    wb::parallel::CommOptions o;
    o.backend = wb::parallel::Backend::Nccl;
    o.timeout = std::chrono::seconds(60);
    auto comm = wb::parallel::Communicator::create(wb::parallel::DistEnv::local(0, 1, *port), o);
    QVERIFY2(comm.ok(), comm.ok() ? "" : comm.error().message.c_str());
    comm_ = std::move(*comm);
  }
  void cleanup() { comm_.reset(); }

  void allReduceAndBroadcastAtWorldSizeOne() {
    QVERIFY(comm_->hasGroup());
    QVERIFY(comm_->device().is_cuda());
    auto sum = comm_->allReduce({1.5, -2.0, 3.0}, wb::parallel::ReduceOp::Sum);
    QVERIFY2(sum.ok(), sum.ok() ? "" : sum.error().message.c_str());
    QCOMPARE(*sum, (std::vector<double>{1.5, -2.0, 3.0}));
    auto t = torch::arange(5, torch::TensorOptions().dtype(torch::kFloat).device(comm_->device()));
    QVERIFY(comm_->broadcast({t}).ok());
    QVERIFY(torch::equal(t.cpu(), torch::arange(5, torch::kFloat)));
    auto bytes = comm_->allGatherBytes("gpu");
    QVERIFY(bytes.ok());
    QCOMPARE(bytes->at(0), std::string("gpu"));
    QVERIFY(comm_->barrier().ok());
  }

  void zero2StepOnCudaMatchesPlainTraining() {
    const auto dev = comm_->device();
    auto makeNet = [&] {
      torch::manual_seed(3);
      auto net = torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 4));
      net->to(dev);
      return net;
    };
    auto factory = [](std::vector<torch::Tensor> p) -> wb::Result<std::unique_ptr<torch::optim::Optimizer>> {
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::Adam>(std::move(p), torch::optim::AdamOptions(1e-2)));
    };
    auto net = makeNet(), ref = makeNet();
    wb::parallel::DataParallelOptions o;
    o.sharding = wb::parallel::Sharding::Zero2;
    auto dp = wb::parallel::DataParallel::create(*comm_, net->parameters(), factory, o);
    QVERIFY2(dp.ok(), dp.ok() ? "" : dp.error().message.c_str());
    QVERIFY((*dp)->gradientMemorySaved());  // native reduce-scatter
    auto refOpt = factory(ref->parameters()).value();
    torch::manual_seed(11);
    auto x = torch::randn({8, 16}).to(dev);
    auto y = torch::randint(0, 4, {8}, torch::kLong).to(dev);
    for (int s = 0; s < 3; ++s) {
      (*dp)->zeroGrad();
      torch::nn::functional::cross_entropy(net->forward(x), y).backward();
      QVERIFY((*dp)->finishGradients().ok());
      QVERIFY((*dp)->step().ok());
      refOpt->zero_grad();
      torch::nn::functional::cross_entropy(ref->forward(x), y).backward();
      refOpt->step();
    }
    auto a = net->parameters(), b = ref->parameters();
    for (size_t i = 0; i < a.size(); ++i) QVERIFY((a[i] - b[i]).abs().max().item<double>() < 1e-5);
    const auto st = (*dp)->lastStats();
    QVERIFY(st.bytes_reduced > 0);
    // Device-timeline figures (CUDA events): a share, and the exposed wait is never negative.
    QVERIFY2(st.overlap >= 0.0 && st.overlap <= 1.0, qPrintable(QString::number(st.overlap)));
    QVERIFY(st.wait_ms >= 0.0);
    QCOMPARE(st.comm_ms, st.launch_ms + st.wait_ms + st.gather_ms);
  }
};

QTEST_APPLESS_MAIN(TestCommunicatorGpu)
#include "test_communicator_gpu.moc"
