// GradScaler: an overflowing step is skipped with parameters untouched and the scale halved;
// the scale grows after growth_interval clean steps; scaled training without overflow equals
// plain training bit for bit; the state survives a checkpoint round trip.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "wb/train/grad_scaler.h"

namespace {

struct Problem {
  torch::nn::Linear net{nullptr};
  std::unique_ptr<torch::optim::SGD> opt;
  torch::Tensor x, y;

  explicit Problem(uint64_t seed) {
    torch::manual_seed(seed);
    net = torch::nn::Linear(6, 3);
    opt = std::make_unique<torch::optim::SGD>(net->parameters(),
                                              torch::optim::SGDOptions(0.05).momentum(0.9));
    torch::manual_seed(seed + 100);
    x = torch::randn({8, 6});
    y = torch::randn({8, 3});
  }
  torch::Tensor loss() { return torch::mse_loss(net->forward(x), y); }
  std::vector<torch::Tensor> snapshot() {
    std::vector<torch::Tensor> out;
    for (auto& p : net->parameters()) out.push_back(p.detach().clone());
    return out;
  }
  bool equals(const std::vector<torch::Tensor>& other) {
    auto ps = net->parameters();
    for (size_t i = 0; i < ps.size(); ++i)
      if (!torch::equal(ps[i], other[i])) return false;
    return true;
  }
};

// One scaled step; poison != 0 writes that value into one gradient element after backward.
bool scaledStep(Problem& p, wb::train::GradScaler& scaler, double poison = 0.0) {
  p.opt->zero_grad();
  scaler.scale(p.loss()).backward();
  if (poison != 0.0 || std::isnan(poison)) p.net->weight.grad().view(-1)[4].fill_(poison);
  bool stepped = scaler.step(*p.opt);
  scaler.update();
  return stepped;
}

wb::train::GradScalerOptions shortInterval() {
  wb::train::GradScalerOptions o;
  o.growth_interval = 3;
  return o;
}

}  // namespace

class TestGradScaler : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }

  void overflowSkipsExactlyThatStep_data() {
    QTest::addColumn<double>("poison");
    QTest::newRow("inf") << std::numeric_limits<double>::infinity();
    QTest::newRow("-inf") << -std::numeric_limits<double>::infinity();
    QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN();
  }
  void overflowSkipsExactlyThatStep() {
    QFETCH(double, poison);
    Problem p(1);
    wb::train::GradScaler scaler;
    QVERIFY(scaledStep(p, scaler));
    QVERIFY(scaledStep(p, scaler));
    QCOMPARE(scaler.readScale(), 65536.0);

    auto before = p.snapshot();
    QVERIFY(!scaledStep(p, scaler, poison));
    QVERIFY2(p.equals(before), "a skipped step must leave every parameter bit-identical");
    QCOMPARE(scaler.readScale(), 32768.0);
    QCOMPARE(scaler.skippedSteps(), int64_t{1});

    QVERIFY(scaledStep(p, scaler));
    QVERIFY2(!p.equals(before), "the step after an overflow must update the parameters");
    QCOMPARE(scaler.skippedSteps(), int64_t{1});
  }

  // Scaling by a power of two and unscaling is exact: with no overflow the scaled run must
  // follow plain SGD bit for bit (wrong unscaling, or a stale found-inf flag, breaks this).
  void scaledTrainingEqualsPlainTraining() {
    Problem scaled(7), plain(7);
    wb::train::GradScaler scaler(shortInterval());
    for (int i = 0; i < 8; ++i) {
      QVERIFY(scaledStep(scaled, scaler));
      plain.opt->zero_grad();
      plain.loss().backward();
      plain.opt->step();
      QVERIFY2(scaled.equals(plain.snapshot()), qPrintable(QStringLiteral("step %1").arg(i)));
    }
    QVERIFY(scaler.readScale() > 65536.0);  // it grew meanwhile and still matched
  }

  // Pattern: '.' a clean step, 'x' an overflowing one; scales after each update().
  void scaleSchedule_data() {
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QList<double>>("scales");
    QTest::addColumn<int>("skipped");
    QTest::newRow("grows every 3 clean steps") << "......"
        << QList<double>{65536, 65536, 131072, 131072, 131072, 262144} << 0;
    QTest::newRow("overflow resets the count") << "..x..."
        << QList<double>{65536, 65536, 32768, 32768, 32768, 65536} << 1;
    QTest::newRow("overflows in a row") << "xxx..."
        << QList<double>{32768, 16384, 8192, 8192, 8192, 16384} << 3;
    QTest::newRow("overflow right after growth") << "...x.."
        << QList<double>{65536, 65536, 131072, 65536, 65536, 65536} << 1;
  }
  void scaleSchedule() {
    QFETCH(QString, pattern);
    QFETCH(QList<double>, scales);
    QFETCH(int, skipped);
    Problem p(3);
    wb::train::GradScaler scaler(shortInterval());
    int64_t run = 0;
    for (int i = 0; i < pattern.size(); ++i) {
      const bool overflow = pattern[i] == QLatin1Char('x');
      QCOMPARE(scaledStep(p, scaler, overflow ? INFINITY : 0.0), !overflow);
      QCOMPARE(scaler.readScale(), scales[i]);
      run = overflow ? run + 1 : 0;
      QCOMPARE(scaler.consecutiveSkips(), run);
    }
    QCOMPARE(scaler.skippedSteps(), int64_t{skipped});
  }

  void stateRoundTrip() {
    Problem p(5);
    wb::train::GradScaler a(shortInterval());
    QVERIFY(!scaledStep(p, a, INFINITY));
    QVERIFY(scaledStep(p, a));
    QVERIFY(scaledStep(p, a));  // two clean steps counted towards growth
    const auto state = a.state();
    QCOMPARE(state.at("scale"), 32768.0);
    QCOMPARE(state.at("growth_tracker"), 2.0);
    QCOMPARE(state.at("skipped"), 1.0);
    QCOMPARE(state.at("consecutive"), 0.0);

    wb::train::GradScaler b(shortInterval());
    b.loadState(state);
    QCOMPARE(b.readScale(), 32768.0);
    QCOMPARE(b.skippedSteps(), int64_t{1});
    // The restored growth count matters: one more clean step must grow both alike.
    QVERIFY(scaledStep(p, b));
    QCOMPARE(b.readScale(), 65536.0);
    QVERIFY(scaledStep(p, a));
    QVERIFY(b.state() == a.state());
  }

  void disabledIsTransparent() {
    Problem p(9);
    wb::train::GradScalerOptions o;
    o.enabled = false;
    wb::train::GradScaler scaler(o);
    auto loss = p.loss();
    QVERIFY(torch::equal(scaler.scale(loss), loss));
    wb::train::GradScaler on;
    QCOMPARE(on.scale(loss).sizes(), loss.sizes());  // a 0-dim loss stays 0-dim
    QVERIFY(torch::equal(on.scale(loss), loss * 65536.0));
    auto before = p.snapshot();
    QVERIFY(scaledStep(p, scaler, INFINITY));  // nothing checked: the step is taken
    QVERIFY(!p.equals(before));
    QCOMPARE(scaler.readScale(), 1.0);
    QCOMPARE(scaler.skippedSteps(), int64_t{0});
  }
};

QTEST_APPLESS_MAIN(TestGradScaler)
#include "test_grad_scaler.moc"
