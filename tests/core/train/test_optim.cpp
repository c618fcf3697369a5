// Optimisers against hand-computed updates, Adadelta state round-trips, and LR schedules.
#include <QtTest/QtTest>

#include <sstream>

#include "wb/train/optim.h"

using wb::OptimConfig;
using wb::train::LrSchedule;

namespace {

OptimConfig optim(const std::string& name, double lr) {
  OptimConfig c;
  c.name = name;
  c.lr = lr;
  return c;
}

// One param [1, -2] (double, so hand-computed values compare to 1e-12) and two fixed grads.
torch::Tensor startParam() {
  return torch::tensor({1.0, -2.0}, torch::kDouble).requires_grad_();
}
const double kGrads[2][2] = {{0.5, -1.0}, {0.25, 0.5}};

void stepWith(torch::optim::Optimizer& opt, const torch::Tensor& p, const double (&g)[2]) {
  p.mutable_grad() = torch::tensor({g[0], g[1]}, torch::kDouble);
  opt.step();
}

bool near(const torch::Tensor& t, std::vector<double> want, double tol = 1e-12) {
  return torch::allclose(t.detach(), torch::tensor(want, torch::kDouble), 0.0, tol);
}

std::string str(const torch::Tensor& t) {
  std::ostringstream s;
  s << t;
  return s.str();
}

}  // namespace

class TestOptim : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // torch.optim.Adadelta, lr 1, rho 0.9, eps 1e-6, weight_decay 0.1. Step 1, first element:
  //   g = 0.5 + 0.1*1 = 0.6; square_avg = 0.1*0.36 = 0.036;
  //   delta = sqrt(0 + 1e-6) / sqrt(0.036 + 1e-6) * 0.6 = 0.0031622337...;
  //   acc_delta = 0.1*delta^2 = 9.99972e-7; p = 1 - delta = 0.99683776...
  void adadeltaMatchesTorchRule() {
    auto p = startParam();
    OptimConfig c = optim("adadelta", 1.0);
    c.weight_decay = 0.1;
    auto made = wb::train::makeOptimizer(c, {p});
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
    auto* opt = dynamic_cast<wb::train::Adadelta*>(made.value().get());
    QVERIFY(opt);

    stepWith(*opt, p, kGrads[0]);
    QVERIFY2(near(p, {0.9968377662594397, -1.9968377333199052}), str(p).c_str());
    stepWith(*opt, p, kGrads[1]);
    QVERIFY2(near(p, {0.9944968843825933, -1.9979784561169456}), str(p).c_str());

    QCOMPARE(opt->state().size(), size_t{1});
    const auto& st = static_cast<const wb::train::AdadeltaParamState&>(*opt->state().begin()->second);
    QCOMPARE(st.step(), int64_t{2});
    QVERIFY2(near(st.square_avg(), {0.044627874363538295, 0.1386189836000111}), str(st.square_avg()).c_str());
    QVERIFY2(near(st.acc_delta(), {1.4479477968291782e-06, 1.0301186000121854e-06}, 1e-18),
             str(st.acc_delta()).c_str());
  }

  // SGD lr 0.1, momentum 0.9, nesterov, weight_decay 0.01:
  //   g' = g + wd*p; buf = g' (then buf = m*buf + g'); p -= lr * (g' + m*buf).
  //   Step 1: g' = [0.51, -1.02]; p = [1 - 0.1*0.969, -2 + 0.1*1.938] = [0.9031, -1.8062].
  void sgdNesterovMatchesHandComputed() {
    auto p = startParam();
    OptimConfig c = optim("sgd", 0.1);
    c.momentum = 0.9;
    c.nesterov = true;
    c.weight_decay = 0.01;
    auto made = wb::train::makeOptimizer(c, {p});
    QVERIFY(made.ok());
    QVERIFY(dynamic_cast<torch::optim::SGD*>(made.value().get()));
    stepWith(*made.value(), p, kGrads[0]);
    QVERIFY2(near(p, {0.9031, -1.8062}), str(p).c_str());
    stepWith(*made.value(), p, kGrads[1]);
    QVERIFY2(near(p, {0.81257411, -1.81514822}), str(p).c_str());
  }

  void adadeltaStateRoundTrips() {
    auto a = startParam();
    wb::train::Adadelta first({a}, wb::train::AdadeltaOptions(1.0).weight_decay(0.1));
    stepWith(first, a, kGrads[0]);
    stepWith(first, a, kGrads[1]);
    std::ostringstream bytes;
    {
      torch::serialize::OutputArchive out;
      first.save(out);
      out.save_to(bytes);
    }

    // Same param values; one optimiser resumes from the saved state, one starts fresh.
    auto b = a.detach().clone().requires_grad_();
    auto c = a.detach().clone().requires_grad_();
    wb::train::Adadelta resumed({b}, wb::train::AdadeltaOptions(1.0).weight_decay(0.1));
    wb::train::Adadelta fresh({c}, wb::train::AdadeltaOptions(1.0).weight_decay(0.1));
    {
      std::istringstream in(bytes.str());
      torch::serialize::InputArchive archive;
      archive.load_from(in);
      resumed.load(archive);
    }
    const auto& st = static_cast<const wb::train::AdadeltaParamState&>(*resumed.state().begin()->second);
    QCOMPARE(st.step(), int64_t{2});

    const double g3[2] = {-0.75, 0.125};
    stepWith(first, a, g3);
    stepWith(resumed, b, g3);
    stepWith(fresh, c, g3);
    QVERIFY2(torch::equal(a, b), (str(a) + " vs " + str(b)).c_str());
    QVERIFY(!torch::allclose(a, c));  // the state matters, so the round trip is what matched
  }

  void everyOptimizerBuildsAndTakesItsLr_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"sgd", "adam", "adamw", "adadelta"}) QTest::newRow(n) << n;
  }

  void everyOptimizerBuildsAndTakesItsLr() {
    QFETCH(QString, name);
    auto p = startParam();
    auto made = wb::train::makeOptimizer(optim(name.toStdString(), 0.02), {p});
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
    auto& opt = *made.value();
    QCOMPARE(opt.param_groups().at(0).options().get_lr(), 0.02);
    wb::train::setLearningRate(opt, 0.125);
    for (auto& group : opt.param_groups()) QCOMPARE(group.options().get_lr(), 0.125);
    const auto before = p.detach().clone();
    stepWith(opt, p, kGrads[0]);
    QVERIFY(!torch::equal(before, p.detach()));  // a step moves the param against the gradient
    QVERIFY(p[0].item<double>() < 1.0 && p[1].item<double>() > -2.0);
  }

  void badConfigNamesTheField_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("lr");
    QTest::addColumn<double>("momentum");
    QTest::addColumn<bool>("nesterov");
    QTest::addColumn<double>("weightDecay");
    QTest::addColumn<QString>("field");
    QTest::newRow("unknown name") << "rmsprop" << 0.1 << 0.0 << false << 0.0 << "optim.name";
    QTest::newRow("negative lr") << "adam" << -1.0 << 0.0 << false << 0.0 << "(optim.lr): -1";
    QTest::newRow("nesterov without momentum") << "sgd" << 0.1 << 0.0 << true << 0.0 << "optim.nesterov";
    QTest::newRow("momentum 1") << "sgd" << 0.1 << 1.0 << false << 0.0 << "optim.momentum";
    QTest::newRow("negative weight decay") << "adadelta" << 1.0 << 0.0 << false << -0.5
                                           << "optim.weight_decay";
  }

  void badConfigNamesTheField() {
    QFETCH(QString, name);
    QFETCH(double, lr);
    QFETCH(double, momentum);
    QFETCH(bool, nesterov);
    QFETCH(double, weightDecay);
    QFETCH(QString, field);
    OptimConfig c = optim(name.toStdString(), lr);
    c.momentum = momentum;
    c.nesterov = nesterov;
    c.weight_decay = weightDecay;
    auto made = wb::train::makeOptimizer(c, {startParam()});
    QVERIFY(!made.ok());
    QCOMPARE(made.error().code, wb::Errc::InvalidConfig);
    const QString msg = QString::fromStdString(made.error().message);
    QVERIFY2(msg.contains(field), qPrintable(msg));
  }

  void noParamsIsAnError() {
    auto made = wb::train::makeOptimizer(optim("sgd", 0.1), {});
    QVERIFY(!made.ok());
    QCOMPARE(made.error().code, wb::Errc::Model);
  }

  void scheduleValues_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<double>("warmup");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<double>("expected");
    // lr 0.1, 100 total steps, 10 steps per epoch; step: step_size 2, gamma 0.5.
    QTest::newRow("constant 0") << "constant" << 0.0 << qint64{0} << 0.1;
    QTest::newRow("constant 77") << "constant" << 0.0 << qint64{77} << 0.1;
    QTest::newRow("step epoch 0") << "step" << 0.0 << qint64{0} << 0.1;
    QTest::newRow("step epoch 1 (last step)") << "step" << 0.0 << qint64{19} << 0.1;
    QTest::newRow("step epoch 2") << "step" << 0.0 << qint64{20} << 0.05;
    QTest::newRow("step epoch 4") << "step" << 0.0 << qint64{45} << 0.025;
    QTest::newRow("cosine start") << "cosine" << 0.0 << qint64{0} << 0.1;
    QTest::newRow("cosine half") << "cosine" << 0.0 << qint64{50} << 0.05;
    QTest::newRow("cosine end") << "cosine" << 0.0 << qint64{100} << 0.0;
    QTest::newRow("cosine warm-up first") << "cosine" << 0.1 << qint64{0} << 0.01;
    QTest::newRow("cosine warm-up mid") << "cosine" << 0.1 << qint64{4} << 0.05;
    QTest::newRow("cosine warm-up last") << "cosine" << 0.1 << qint64{9} << 0.1;
    QTest::newRow("cosine after warm-up") << "cosine" << 0.1 << qint64{10} << 0.1;
    QTest::newRow("cosine after warm-up half") << "cosine" << 0.1 << qint64{55} << 0.05;
    // OneCycleLR(max_lr=0.1, total_steps=100): initial 0.004, peak at step 29, min 4e-7.
    QTest::newRow("onecycle start") << "onecycle" << 0.0 << qint64{0} << 0.004;
    QTest::newRow("onecycle rising") << "onecycle" << 0.0 << qint64{15} << 0.05459866761210004;
    QTest::newRow("onecycle peak") << "onecycle" << 0.0 << qint64{29} << 0.1;
    QTest::newRow("onecycle half down") << "onecycle" << 0.0 << qint64{64} << 0.0500002;
    QTest::newRow("onecycle end") << "onecycle" << 0.0 << qint64{99} << 4e-7;
    QTest::newRow("onecycle past end") << "onecycle" << 0.0 << qint64{150} << 4e-7;
    QTest::newRow("onecycle pct_start 0.5 peak") << "onecycle" << 0.5 << qint64{49} << 0.1;
  }

  void scheduleValues() {
    QFETCH(QString, schedule);
    QFETCH(double, warmup);
    QFETCH(qint64, step);
    QFETCH(double, expected);
    OptimConfig c = optim("sgd", 0.1);
    c.schedule = schedule.toStdString();
    c.warmup_fraction = warmup;
    c.step_size = 2;
    c.gamma = 0.5;
    const LrSchedule s(c, 100, 10);
    const double got = s.lrAt(step);
    QVERIFY2(std::abs(got - expected) < 1e-12,
             qPrintable(QStringLiteral("lrAt(%1) = %2, want %3").arg(step).arg(got, 0, 'g', 17).arg(expected)));
    QCOMPARE(s.lrAt(step), got);  // a pure function of the step
  }

  void warmUpIsMonotone_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<double>("warmup");
    QTest::addColumn<qint64>("peak");
    QTest::newRow("cosine 20%") << "cosine" << 0.2 << qint64{19};
    QTest::newRow("onecycle default 30%") << "onecycle" << 0.0 << qint64{29};
  }

  void warmUpIsMonotone() {
    QFETCH(QString, schedule);
    QFETCH(double, warmup);
    QFETCH(qint64, peak);
    OptimConfig c = optim("adamw", 0.3);
    c.schedule = schedule.toStdString();
    c.warmup_fraction = warmup;
    const LrSchedule s(c, 100, 7);
    for (int64_t i = 1; i <= peak; ++i) QVERIFY2(s.lrAt(i) > s.lrAt(i - 1), qPrintable(QString::number(i)));
    QCOMPARE(s.lrAt(peak), 0.3);
    for (int64_t i = peak + 1; i < 100; ++i) QVERIFY2(s.lrAt(i) <= s.lrAt(i - 1), qPrintable(QString::number(i)));
    QVERIFY(s.lrAt(0) < 0.3 / 4);
  }

  void constantStartsAtLr() {
    OptimConfig c = optim("adam", 0.0042);
    const LrSchedule s(c, 1000, 10);
    QCOMPARE(s.lrAt(0), 0.0042);
    QCOMPARE(s.lrAt(999), 0.0042);
  }

  // optim.lr_scaling multiplies the schedule by its factor for the devices, warmed up from × 1.
  void lrScalingMultipliesTheSchedule_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("devices");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<double>("expected");
    // lr 0.1, 100 steps, lr_scaling_warmup 0.05: a 5-step warm-up.
    QTest::newRow("none, 2 devices") << "none" << "constant" << 2 << qint64{0} << 0.1;
    QTest::newRow("linear, 1 device") << "linear" << "constant" << 1 << qint64{0} << 0.1;
    QTest::newRow("linear, 2 devices, first step") << "linear" << "constant" << 2 << qint64{0} << 0.12;
    QTest::newRow("linear, 2 devices, warm-up mid") << "linear" << "constant" << 2 << qint64{2} << 0.16;
    QTest::newRow("linear, 2 devices, after warm-up") << "linear" << "constant" << 2 << qint64{4} << 0.2;
    QTest::newRow("linear, 4 devices, late") << "linear" << "constant" << 4 << qint64{80} << 0.4;
    QTest::newRow("sqrt, 4 devices, late") << "sqrt" << "constant" << 4 << qint64{80} << 0.2;
    QTest::newRow("linear, 2 devices, cosine half") << "linear" << "cosine" << 2 << qint64{50} << 0.1;
  }
  void lrScalingMultipliesTheSchedule() {
    QFETCH(QString, mode);
    QFETCH(QString, schedule);
    QFETCH(int, devices);
    QFETCH(qint64, step);
    QFETCH(double, expected);
    OptimConfig c = optim("sgd", 0.1);
    c.schedule = schedule.toStdString();
    c.lr_scaling = mode.toStdString();
    const LrSchedule s(c, 100, 10, devices);
    QVERIFY2(std::abs(s.lrAt(step) - expected) < 1e-12,
             qPrintable(QStringLiteral("lrAt(%1) = %2, want %3").arg(step).arg(s.lrAt(step), 0, 'g', 17).arg(expected)));
    const auto j = s.scalingJson();
    QCOMPARE(j["mode"].get<std::string>(), mode.toStdString());
    QCOMPARE(j["devices"].get<int>(), devices);
    QVERIFY(j["note"].get<std::string>().find("optim.lr 0.1") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestOptim)
#include "test_optim.moc"
