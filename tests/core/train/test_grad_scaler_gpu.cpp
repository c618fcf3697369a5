// fp16 mixed precision on the GPU: CUDA autocast runs the forward in fp16, the GradScaler's
// fused CUDA kernels unscale/skip/grow as on the CPU path, and a small model trains.
#include <QtTest/QtTest>

#include <cmath>

#include <torch/torch.h>

#include "wb/train/compat.h"
#include "wb/train/grad_scaler.h"

namespace {

struct GpuProblem {
  torch::nn::Sequential net{nullptr};
  std::unique_ptr<torch::optim::SGD> opt;
  torch::Tensor x, y;

  GpuProblem() {
    torch::manual_seed(21);
    net = torch::nn::Sequential(torch::nn::Linear(32, 64), torch::nn::ReLU(), torch::nn::Linear(64, 4));
    net->to(torch::kCUDA);
    opt = std::make_unique<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    x = torch::randn({256, 32}).to(torch::kCUDA);
    y = x.narrow(1, 0, 4).argmax(1);  // learnable: the index of the largest of 4 features
  }

  // One fp16 step; poison writes inf into a gradient after backward.
  std::pair<bool, torch::Tensor> step(wb::train::GradScaler& scaler, bool poison = false) {
    opt->zero_grad();
    torch::Tensor loss;
    {
      wb::compat::AutocastGuard autocast(c10::kCUDA, at::kHalf, true);
      auto logits = net->forward(x);
      if (logits.scalar_type() != at::kHalf) throw std::runtime_error("autocast did not run fp16");
      loss = torch::nn::functional::cross_entropy(logits, y);
    }
    scaler.scale(loss).backward();
    if (poison) net->parameters()[0].grad().view(-1)[0].fill_(INFINITY);
    const bool stepped = scaler.step(*opt);
    scaler.update();
    return {stepped, loss.detach()};
  }
};

}  // namespace

class TestGradScalerGpu : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    if (!torch::cuda::is_available())
      QSKIP("needs CUDA: this LibTorch build or machine has no CUDA device");
  }

  void fp16ScalerTrains() {
    GpuProblem p;
    wb::train::GradScaler scaler({}, torch::Device(torch::kCUDA));
    const float first = p.step(scaler).second.item<float>();
    float last = first;
    for (int i = 0; i < 60; ++i) {
      auto [stepped, loss] = p.step(scaler);
      QVERIFY(stepped);
      last = loss.item<float>();
    }
    QVERIFY2(last < 0.7f * first, qPrintable(QStringLiteral("loss %1 -> %2").arg(first).arg(last)));
    QCOMPARE(scaler.skippedSteps(), int64_t{0});
    QCOMPARE(scaler.readScale(), 65536.0);
  }

  void overflowSkipsAndScaleMovesOnGpu() {
    GpuProblem p;
    wb::train::GradScalerOptions o;
    o.growth_interval = 3;
    wb::train::GradScaler scaler(o, torch::Device(torch::kCUDA));
    QVERIFY(p.step(scaler).first);
    std::vector<torch::Tensor> before;
    for (auto& t : p.net->parameters()) before.push_back(t.detach().clone());
    QVERIFY(!p.step(scaler, /*poison=*/true).first);
    auto after = p.net->parameters();
    for (size_t i = 0; i < before.size(); ++i) QVERIFY(torch::equal(before[i], after[i]));
    QCOMPARE(scaler.readScale(), 32768.0);
    QCOMPARE(scaler.skippedSteps(), int64_t{1});
    for (int i = 0; i < 3; ++i) QVERIFY(p.step(scaler).first);
    QCOMPARE(scaler.readScale(), 65536.0);  // grew after 3 clean steps
  }
};

QTEST_APPLESS_MAIN(TestGradScalerGpu)
#include "test_grad_scaler_gpu.moc"
