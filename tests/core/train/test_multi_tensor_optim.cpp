// speedups.fused_optimizer: the multi-tensor (_foreach) SGD, Adam and AdamW steps move every
// parameter as LibTorch's own loop does (to 1e-6 over 20 steps, in fp32, on tensors of several
// shapes and layouts, one of them without a gradient in some steps), keep the same state, so a
// checkpoint of one resumes the other, and Adadelta (which has none) is refused by name.
#include <QtTest/QtTest>

#include <sstream>
#include <typeinfo>

#include "wb/parallel/data_parallel.h"
#include "wb/train/optim.h"

namespace {

wb::OptimConfig optimOf(const QString& name, double momentum, bool nesterov, double weightDecay) {
  wb::OptimConfig c;
  c.name = name.toStdString();
  c.lr = name == QLatin1String("sgd") ? 0.05 : 0.01;
  c.momentum = momentum;
  c.nesterov = nesterov;
  c.weight_decay = weightDecay;
  return c;
}

// The same starting values, twice: a conv weight (channels-last), a matrix, a bias, a scalar.
std::vector<torch::Tensor> params() {
  torch::manual_seed(11);
  std::vector<torch::Tensor> p{torch::randn({8, 3, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast), torch::randn({40, 17}),
                               torch::randn({17}), torch::randn({})};
  for (auto& t : p) t.requires_grad_();
  return p;
}

// Step s's gradients (the bias has none on odd steps: a parameter an optimiser must skip).
void setGrads(std::vector<torch::Tensor>& p, int s) {
  torch::manual_seed(1000 + s);
  for (size_t i = 0; i < p.size(); ++i) {
    auto g = torch::randn(p[i].sizes());
    p[i].mutable_grad() = (i == 2 && s % 2 == 1) ? torch::Tensor() : g;
  }
}

double maxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}

void stepBoth(torch::optim::Optimizer& plain, std::vector<torch::Tensor>& pp, torch::optim::Optimizer& multi,
              std::vector<torch::Tensor>& mp, int from, int to) {
  for (int s = from; s < to; ++s) {
    setGrads(pp, s);
    setGrads(mp, s);
    plain.step();
    multi.step();
  }
}

}  // namespace

class TestMultiTensorOptim : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void stepsMatchTheLoopOverTensors_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("momentum");
    QTest::addColumn<bool>("nesterov");
    QTest::addColumn<double>("weightDecay");
    QTest::newRow("sgd") << QStringLiteral("sgd") << 0.0 << false << 0.0;
    QTest::newRow("sgd momentum, weight decay") << QStringLiteral("sgd") << 0.9 << false << 1e-2;
    QTest::newRow("sgd nesterov") << QStringLiteral("sgd") << 0.5 << true << 0.0;
    QTest::newRow("adam, weight decay") << QStringLiteral("adam") << 0.0 << false << 1e-2;
    QTest::newRow("adamw, weight decay") << QStringLiteral("adamw") << 0.0 << false << 5e-2;
  }
  void stepsMatchTheLoopOverTensors() {
    QFETCH(QString, name);
    QFETCH(double, momentum);
    QFETCH(bool, nesterov);
    QFETCH(double, weightDecay);
    const wb::OptimConfig c = optimOf(name, momentum, nesterov, weightDecay);
    auto pp = params(), mp = params();
    auto plain = wb::train::makeOptimizer(c, pp);
    auto multi = wb::train::makeOptimizer(c, mp, /*multiTensor=*/true);
    QVERIFY(plain.ok() && multi.ok());
    QVERIFY2(typeid(**multi) != typeid(**plain), "the multi-tensor step is another class");
    stepBoth(**plain, pp, **multi, mp, 0, 20);
    const double diff = maxDiff(pp, mp);
    QVERIFY2(diff < 1e-6, qPrintable(QStringLiteral("max |multi - plain| = %1").arg(diff)));
    QVERIFY(maxDiff(pp, params()) > 1e-3);  // they did move
    QVERIFY(mp[0].is_contiguous(at::MemoryFormat::ChannelsLast));  // the layout is kept

    // The state is LibTorch's: the multi-tensor optimiser's checkpoint resumes the plain one.
    const std::string state = wb::parallel::saveOptimizerState(**multi);
    auto resumed = wb::train::makeOptimizer(c, pp);
    QVERIFY(resumed.ok());
    {
      torch::NoGradGuard g;
      for (size_t i = 0; i < pp.size(); ++i) pp[i].copy_(mp[i]);
    }
    QVERIFY(wb::parallel::loadOptimizerState(**resumed, state).ok());
    stepBoth(**resumed, pp, **multi, mp, 20, 25);
    QVERIFY2(maxDiff(pp, mp) < 1e-6, qPrintable(QString::number(maxDiff(pp, mp))));
  }

  void adadeltaIsRefusedByName() {
    auto p = params();
    auto made = wb::train::makeOptimizer(optimOf(QStringLiteral("adadelta"), 0, false, 0), p, true);
    QVERIFY(!made.ok());
    QCOMPARE(int(made.error().code), int(wb::Errc::InvalidConfig));
    QVERIFY2(made.error().message.find("speedups.fused_optimizer") != std::string::npos, made.error().message.c_str());
    wb::Config config;
    config.optim.name = "adadelta";
    config.speedups.fused_optimizer = true;
    const auto errors = wb::validate(config);
    QCOMPARE(int(errors.size()), 1);
    QCOMPARE(QString::fromStdString(errors[0].path), QStringLiteral("speedups.fused_optimizer"));
  }
};

QTEST_APPLESS_MAIN(TestMultiTensorOptim)
#include "test_multi_tensor_optim.moc"
