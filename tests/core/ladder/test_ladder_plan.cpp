// The ladder plan reading the stored worker probe (the workers step's count and note), and the
// plan for this machine: --steps, --lr-scaling and what the machine's checks refuse.
#include <QtTest/QtTest>

#include "wb/ladder/ladder.h"
#include "wb/probe/record.h"

#include "../../support/probe_rows.h"

using nlohmann::json;
using namespace wb::records;
using namespace wb::ladder;
using wb::probe::attachProbe;

namespace {

using wb::test::resultFor;
using wb::test::rowsOf;

json cpuCaps() {
  return {{"cuda", false}, {"gpus", 0}, {"cores", 2},
          {"speedups", {{"workers", {{"available", true}, {"max", 64}}}}}};
}

const LadderStep& workersStep(const std::vector<LadderStep>& plan) {
  for (const auto& s : plan)
    if (s.key == "workers" && !s.isolated) return s;
  throw std::logic_error("no workers step");
}

const LadderStep& stepOf(const std::vector<LadderStep>& plan, const std::string& key) {
  for (const auto& s : plan)
    if (s.key == key && !s.isolated) return s;
  throw std::logic_error("no step " + key);
}

}  // namespace

class TestLadderPlan : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void ladderWorkersStepUsesTheStoredProbe() {
    const MachineId m{"h", "c", 2};
    wb::Config user;
    // No probe: the old rule, and the note says how to measure.
    json caps = cpuCaps();
    const LadderStep& plain = workersStep(planLadder(user, caps, false));
    QCOMPARE(plain.config.speedups.workers, 2);  // min(cores 2, 4)
    QVERIFY(QString::fromStdString(plain.note).contains(QStringLiteral("probe workers")));

    attachProbe(caps, resultFor(user, m, rowsOf({{0, 500}, {1, 800}, {3, 1000}, {4, 1001}})));
    const auto plan = planLadder(user, caps, true);
    const LadderStep& probed = workersStep(plan);
    QCOMPARE(probed.config.speedups.workers, 3);
    QVERIFY(!probed.skipped);
    QVERIFY2(QString::fromStdString(probed.note).contains(QStringLiteral("probe of 2026-12-01 08:40 UTC")),
             probed.note.c_str());
    QCOMPARE(QString::fromStdString(probed.added), QStringLiteral("loader workers 0 → 3"));
    for (const auto& s : plan)
      if (s.key == "workers" && s.isolated) QCOMPARE(s.config.speedups.workers, 3);

    // A probe that recommends 0: the step says why it does not run.
    json caps0 = cpuCaps();
    attachProbe(caps0, resultFor(user, m, rowsOf({{0, 1000}, {1, 990}})));
    const LadderStep& zero = workersStep(planLadder(user, caps0, false));
    QVERIFY(zero.skipped);
    QVERIFY(QString::fromStdString(zero.note).contains(QStringLiteral("recommends 0 workers")));
    QVERIFY2(!QString::fromStdString(zero.added).contains(QStringLiteral("0 → 0")), zero.added.c_str());
  }

  // The plan as it runs here: --steps leaves the others out with a note, an unknown key is an
  // error naming the known ones, and what the machine's check refuses is skipped with its words.
  void planForMachineAppliesStepsAndTheMachinesChecks() {
    wb::Config user;
    PlanOptions o;
    o.steps = "workers,precision";
    auto refuseBf16 = [](const wb::Config& c) {
      std::vector<wb::FieldError> errs;
      if (c.speedups.precision == "bf16-mixed") errs.push_back({"speedups.precision", "bf16-mixed", "not on this test machine"});
      return errs;
    };
    json caps = cpuCaps();
    caps["speedups"]["precision"] = {{"available", true}, {"values", {{"bf16-mixed", {{"available", true}}}}}};
    auto plan = planForMachine(user, caps, o, refuseBf16);
    QVERIFY(plan.ok());
    QVERIFY(!stepOf(*plan, "workers").skipped);
    QVERIFY(stepOf(*plan, "precision").skipped);
    QVERIFY2(QString::fromStdString(stepOf(*plan, "precision").note).contains(QStringLiteral("not on this test machine")),
             stepOf(*plan, "precision").note.c_str());
    QCOMPARE(QString::fromStdString(stepOf(*plan, "devices").note), QStringLiteral("left out (--steps)"));
    QVERIFY(stepOf(*plan, "inference_eval").skipped);  // it builds on the refused bf16: refused too
    o.steps = "warp_drive";
    auto bad = planForMachine(user, caps, o, nullptr);
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().message).contains(QStringLiteral("unknown step 'warp_drive'")));
    QVERIFY(QString::fromStdString(bad.error().message).contains(QStringLiteral("inference_eval")));
    o.steps.clear();
    o.lr_scaling = "cubic";
    QVERIFY(!planForMachine(user, caps, o, nullptr).ok());
  }

  // The devices step scales the lr by default, by the optimiser's rule, and says which and why;
  // --lr-scaling none keeps the larger global batch at optim.lr.
  void theDevicesStepScalesTheLrByDefault() {
    wb::Config user;
    PlanOptions o;
    auto plan = planForMachine(user, cpuCaps(), o, nullptr);
    QVERIFY(plan.ok());
    const LadderStep& devices = stepOf(*plan, "devices");
    QVERIFY2(!devices.skipped, devices.note.c_str());
    QCOMPARE(QString::fromStdString(devices.config.optim.lr_scaling), QStringLiteral("linear"));  // SGD
    QVERIFY2(QString::fromStdString(devices.note).contains(QStringLiteral("linear lr scaling (sgd")), devices.note.c_str());
    QCOMPARE(QString::fromStdString(stepOf(*plan, "baseline").config.optim.lr_scaling), QStringLiteral("none"));
    user.optim.name = "adamw";
    const auto adam = planForMachine(user, cpuCaps(), o, nullptr);
    QCOMPARE(QString::fromStdString(stepOf(*adam, "devices").config.optim.lr_scaling), QStringLiteral("sqrt"));
    o.lr_scaling = "none";
    const auto none = planForMachine(user, cpuCaps(), o, nullptr);
    QCOMPARE(QString::fromStdString(stepOf(*none, "devices").config.optim.lr_scaling), QStringLiteral("none"));
    QVERIFY(QString::fromStdString(stepOf(*none, "devices").note).contains(QStringLiteral("no lr scaling")));
  }

  // The levers past the recipe's: each a step with its descriptor's value, off in the default
  // ladder where it cannot help (the decoded cache for a dataset held in memory or one epoch,
  // channels-last for a net without convolutions, accumulation on one device) or where the machine
  // lacks what it needs (CUDA), each skip saying why.
  void leversAreStepsWhereTheyCanHelp() {
    wb::Config user;
    user.train.epochs = 3;
    auto plan = planLadder(user, cpuCaps(), true);
    const LadderStep& cache = stepOf(plan, "decoded_cache");
    QVERIFY(cache.skipped);
    QVERIFY2(cache.note.find("held decoded in memory already") != std::string::npos, cache.note.c_str());
    QVERIFY(!stepOf(plan, "channels_last").skipped);
    QVERIFY(stepOf(plan, "channels_last").config.speedups.channels_last);
    QVERIFY(!stepOf(plan, "fused_optimizer").skipped);
    const LadderStep& accumulate = stepOf(plan, "grad_accumulation");  // after the devices step: 2 CPU processes
    QVERIFY2(!accumulate.skipped, accumulate.note.c_str());
    QCOMPARE(accumulate.config.speedups.grad_accumulation, 4);
    for (const char* key : {"cudnn_benchmark", "tf32"}) {
      QVERIFY(stepOf(plan, key).skipped);
      QVERIFY2(stepOf(plan, key).note.rfind("needs CUDA", 0) == 0, stepOf(plan, key).note.c_str());
    }
    bool alone = false;  // the isolated twin of a lever that runs
    for (const auto& s : plan) alone = alone || (s.isolated && s.key == "channels_last" && s.config.speedups.channels_last);
    QVERIFY(alone);

    user.data.dataset = "folder:/data/images";
    user.model.name = "mlp";
    const auto folderPlan = planLadder(user, cpuCaps(), false);
    QVERIFY(!stepOf(folderPlan, "decoded_cache").skipped);
    QCOMPARE(QString::fromStdString(stepOf(folderPlan, "decoded_cache").config.speedups.decoded_cache), QStringLiteral("memory"));
    QVERIFY(stepOf(folderPlan, "channels_last").skipped);
    QVERIFY(QString::fromStdString(stepOf(folderPlan, "channels_last").note).contains(QStringLiteral("no convolutions")));
    user.train.epochs = 1;
    QVERIFY(QString::fromStdString(stepOf(planLadder(user, cpuCaps(), false), "decoded_cache").note).contains(QStringLiteral("one epoch")));
  }
};

QTEST_APPLESS_MAIN(TestLadderPlan)
#include "test_ladder_plan.moc"
