// The math check on real short runs (Fashion-MNIST, lenet and mlp, the real trainer in this
// process): a speedup that keeps the math gives the baseline's losses step for step within the
// stated tolerance, one that changes it (bf16, accumulation) is caught at the step it differs with
// the words why, one inactive on this machine keeps it here and says so, and what one process
// cannot show (devices, sharding, early stopping) is said to be unchecked.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "../../support/machine.h"
#include "wb/common/choices.h"
#include "wb/probe/math_check.h"

namespace {

wb::Config tiny(const char* model = "lenet") {
  wb::Config c;
  c.seed = 3;
  c.model.name = model;
  c.data.limit_train = 512;
  c.data.limit_val = 256;
  c.train.batch_size = 32;
  c.train.threads = 1;
  return c;
}

wb::probe::MathCheckResult check(const wb::Config& base, const wb::Config& variant, int steps = 6, bool repeat = false) {
  wb::probe::MathCheckOptions o;
  o.baseline = base;
  o.variant = variant;
  o.steps = steps;
  o.repeat_baseline = repeat;
  auto r = wb::probe::checkMath(o);
  if (!r.ok()) {
    QTest::qFail(("the check failed: " + r.error().message).c_str(), __FILE__, __LINE__);
    return {};
  }
  return r.value();
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestMathCheck : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingFashionMnist());
  }

  // Each lever that keeps the math: every step within its tolerance, and the validation loss too.
  void keepingLeversPass_data() {
    QTest::addColumn<QString>("fieldName");
    QTest::addColumn<QString>("model");
    QTest::newRow("workers 2") << QStringLiteral("workers") << QStringLiteral("lenet");
    QTest::newRow("channels-last") << QStringLiteral("channels_last") << QStringLiteral("lenet");
    QTest::newRow("multi-tensor sgd") << QStringLiteral("fused_optimizer") << QStringLiteral("mlp");
    QTest::newRow("inference-mode eval") << QStringLiteral("inference_eval") << QStringLiteral("lenet");
  }
  void keepingLeversPass() {
    QFETCH(QString, fieldName);
    QFETCH(QString, model);
    const std::string field = fieldName.toStdString();
    wb::Config base = tiny(model.toUtf8().constData()), variant = base;
    base.speedups.inference_eval = false;
    variant.speedups.inference_eval = false;
    if (field == "workers") variant.speedups.workers = 2;
    if (field == "channels_last") variant.speedups.channels_last = true;
    if (field == "fused_optimizer") variant.speedups.fused_optimizer = true;
    if (field == "inference_eval") variant.speedups.inference_eval = true;
    const auto r = check(base, variant, 6, field == "workers");
    QVERIFY2(r.checked && r.keeps_math, r.verdict.c_str());
    QCOMPARE(r.speedup, field);
    QCOMPARE(int(r.rows.size()), 7);  // six steps and the validation loss after them
    for (int i = 0; i < 6; ++i) QCOMPARE(r.rows[size_t(i)].step, int64_t(i + 1));
    QCOMPARE(r.rows.back().step, int64_t(0));
    for (const auto& s : r.rows) QVERIFY2(s.deviation <= s.tolerance, r.verdict.c_str());
    QCOMPARE(r.diverged_at_step, int64_t(0));
    QVERIFY2(has(r.verdict, "keeps the math") && has(r.verdict, "tolerance"), r.verdict.c_str());
    if (field == "workers") {  // the loader is ordered: the very batches of 0 workers, the same losses
      for (const auto& s : r.rows) QVERIFY(s.repeat.has_value());
      QCOMPARE(r.rows.front().variant, r.rows.front().baseline);
    }
  }

  // bf16 autocast rounds activations: caught at a step, with the deviation, tolerance and why.
  void bf16Fails() {
    wb::Config variant = tiny();
    variant.speedups.precision = wb::choice::kBf16Mixed;
    const auto r = check(tiny(), variant, 10);
    QVERIFY(r.checked);
    QVERIFY2(!r.keeps_math, r.verdict.c_str());
    QVERIFY(r.diverged_at_step >= 1);
    QVERIFY(r.max_deviation > r.rows[size_t(r.diverged_at_step - 1)].tolerance);
    QVERIFY2(has(r.verdict, "losses differ by") && has(r.verdict, ("at step " + std::to_string(r.diverged_at_step)).c_str()) &&
                 has(r.verdict, "tolerance") && has(r.verdict, "treated as changing the math") && has(r.verdict, "bf16"),
             r.verdict.c_str());
  }

  // Two micro-batches per step: the first step is the same, the second is taken before any update.
  void accumulationFailsAtTheSecondStep() {
    wb::Config variant = tiny();
    variant.speedups.grad_accumulation = 2;
    const auto r = check(tiny(), variant, 4);
    QVERIFY2(!r.keeps_math, r.verdict.c_str());
    QCOMPARE(r.rows[0].deviation, 0.0);
    QCOMPARE(r.diverged_at_step, int64_t(2));
  }

  // Asked for but inactive on this machine: it keeps the math here, and says so.
  void inactiveKeepsItHere_data() {
    QTest::addColumn<QString>("fieldName");
    QTest::newRow("decoded cache on IDX") << QStringLiteral("decoded_cache");
    QTest::newRow("tf32") << QStringLiteral("tf32");
  }
  void inactiveKeepsItHere() {
    QFETCH(QString, fieldName);
    const std::string field = fieldName.toStdString();
    if (field == "tf32" && torch::cuda::is_available()) QSKIP("TF32 is active on a CUDA machine: the GPU test checks it there");
    wb::Config variant = tiny();
    if (field == "tf32") variant.speedups.tf32 = true;
    else variant.speedups.decoded_cache = "memory";
    const auto r = check(tiny(), variant, 3);
    QVERIFY2(r.checked && r.inactive && r.keeps_math, r.verdict.c_str());
    QVERIFY2(has(r.verdict, "inactive on this machine"), r.verdict.c_str());
  }

  // The tolerance is stated, grows with the step, and the rule is the one the result gives.
  void toleranceIsStated() {
    wb::Config variant = tiny();
    variant.speedups.channels_last = true;
    wb::probe::MathCheckOptions o;
    o.baseline = tiny();
    o.variant = variant;
    o.steps = 4;
    o.tolerance_per_step = 2e-4;
    o.repeat_baseline = true;
    auto r = wb::probe::checkMath(o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->tolerance_per_step, 2e-4);
    QVERIFY2(has(r->tolerance_rule, "0.02 % x step") && has(r->tolerance_rule, "0.08 % at step 4"), r->tolerance_rule.c_str());
    for (const auto& s : r->rows)
      if (s.step > 0) QVERIFY(s.tolerance >= 2e-4 * double(s.step) - 1e-15);
    const auto doc = wb::probe::mathCheckJson(*r);
    QVERIFY(doc["tolerance"].get<std::string>() == r->tolerance_rule);
    QCOMPARE(doc["steps"].get<int>(), 4);
    QVERIFY(doc["keeps_math"].is_boolean() && doc["max_deviation"].is_number());
  }

  // What one process cannot show is said, not pretended; the descriptor's word is given.
  void notCheckableInOneProcess() {
    wb::Config two = tiny(), sharded = tiny(), stopping = tiny();
    two.speedups.devices = 2;
    sharded.speedups.devices = 2;
    sharded.speedups.sharding = "zero1";
    stopping.speedups.early_stopping.patience = 2;
    const auto devices = check(tiny(), two);
    QVERIFY(!devices.checked && !devices.keeps_math && devices.rows.empty());
    QVERIFY2(has(devices.verdict, "not checked in one process") && has(devices.verdict, "more than one process"),
             devices.verdict.c_str());
    const auto zero = check(two, sharded);
    QVERIFY2(!zero.checked && zero.keeps_math && has(zero.verdict, "whole-process trials"), zero.verdict.c_str());
    const auto early = check(tiny(), stopping);
    QVERIFY2(!early.checked && !early.keeps_math && has(early.verdict, "where the run ends"), early.verdict.c_str());
  }

  // A change is composed from what every part of it does to the math: loader workers ride along
  // with two devices and a larger batch (a search's candidate), and the whole changes the math;
  // workers with early stopping too; workers on an experiment already on two devices keep it.
  void aMixOfKeepingAndChangingChangesTheMath() {
    wb::Config mixed = tiny(), stopping = tiny(), twoBase = tiny(), twoWorkers = tiny();
    mixed.speedups.workers = 2;
    mixed.speedups.devices = 2;
    mixed.train.batch_size = 256;
    const auto m = check(tiny(), mixed);
    QVERIFY2(!m.checked && !m.keeps_math, m.verdict.c_str());
    QVERIFY2(has(m.verdict, "speedups.devices and train.batch_size change the math"), m.verdict.c_str());
    stopping.speedups.workers = 2;
    stopping.speedups.early_stopping.patience = 2;
    const auto s = check(tiny(), stopping);
    QVERIFY2(!s.checked && !s.keeps_math && has(s.verdict, "where the run ends"), s.verdict.c_str());
    twoBase.speedups.devices = twoWorkers.speedups.devices = 2;
    twoWorkers.speedups.workers = 2;
    const auto w = check(twoBase, twoWorkers);
    QVERIFY2(!w.checked && w.keeps_math, w.verdict.c_str());
  }

  void badConfigIsRefused() {
    wb::Config variant = tiny();
    variant.train.batch_size = -3;
    wb::probe::MathCheckOptions o;
    o.baseline = tiny();
    o.variant = variant;
    auto r = wb::probe::checkMath(o);
    QVERIFY(!r.ok());
    QVERIFY2(has(r.error().message, "train.batch_size"), r.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestMathCheck)
#include "test_math_check.moc"
