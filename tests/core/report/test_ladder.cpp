// The ladder plan (what runs, what is skipped and why, for CPU and CUDA capabilities) and its
// summary (medians over repeats, cumulative and marginal speedups, the table and the chart).
#include <QtTest/QtTest>

#include "report_fixture.h"
#include "wb/report/export.h"
#include "wb/report/ladder.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::report;

namespace {

// What `workbench-cli capabilities --json` says on a 2-core CPU machine (the contract's example).
json cpuCaps(int devicesMax = 2) {
  return json::parse(
      "{\"version\":\"0.1.0\",\"cuda\":false,\"gpus\":0,\"cores\":2,"
      "\"speedups\":{\"workers\":{\"available\":true,\"default\":2,\"max\":64},"
      "\"pin_memory\":{\"available\":false,\"note\":\"needs CUDA; not available on this machine\"},"
      "\"devices\":{\"available\":true,\"max\":" + std::to_string(devicesMax) + ",\"kind\":\"cpu-processes\"},"
      "\"precision\":{\"available\":true,\"values\":{\"32-true\":{\"available\":true},"
      "\"bf16-mixed\":{\"available\":true},\"16-mixed\":{\"available\":false,\"note\":\"needs CUDA\"}}},"
      "\"early_stopping\":{\"available\":true},\"sharding\":{\"available\":true},"
      "\"inference_eval\":{\"available\":true}}}");
}

json cudaCaps() {
  json c = cpuCaps(4);
  c["cuda"] = true;
  c["gpus"] = 4;
  c["cores"] = 16;
  c["speedups"]["pin_memory"] = {{"available", true}};
  c["speedups"]["precision"]["values"]["16-mixed"] = {{"available", true}};
  return c;
}

QStringList keys(const std::vector<LadderStep>& steps) {
  QStringList out;
  for (const auto& s : steps) out << QString::fromStdString((s.isolated ? "alone:" : "") + s.key + (s.skipped ? "(skipped)" : ""));
  return out;
}

const LadderStep& stepOf(const std::vector<LadderStep>& steps, const std::string& key, bool isolated = false) {
  for (const auto& s : steps)
    if (s.key == key && s.isolated == isolated) return s;
  throw std::logic_error("no step " + key);
}

RunRecord runWith(double wall, double acc, double accT, int64_t rss = 100 << 20) {
  FakeRun r;
  r.start().step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, rss).eval(1, accT, acc).end("ok", wall);
  static int n = 0;
  return r.record("r" + std::to_string(++n));
}

}  // namespace

class TestLadder : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cpuPlanSkipsWhatItCannotDo() {
    wb::Config user;
    user.speedups.workers = 3;       // the user's speedups are reset for the baseline
    user.speedups.inference_eval = true;
    user.train.epochs = 1;
    auto plan = planLadder(user, cpuCaps(), false);
    QCOMPARE(keys(plan).join(QLatin1Char(',')),
             QStringLiteral("baseline,workers,pin_memory(skipped),devices,precision,early_stopping,sharding,inference_eval"));
    const auto& base = plan[0].config.speedups;
    QCOMPARE(base.workers, 0);
    QCOMPARE(base.devices, 1);
    QCOMPARE(QString::fromStdString(base.precision), QStringLiteral("32-true"));
    QCOMPARE(base.inference_eval, false);
    QCOMPARE(base.early_stopping.patience, 0);
    QCOMPARE(QString::fromStdString(stepOf(plan, "pin_memory").note), QStringLiteral("needs CUDA; not available on this machine"));
    // Cumulative: each step keeps what came before.
    const auto& last = plan.back().config.speedups;
    QCOMPARE(last.workers, 2);       // min(cores 2, 4)
    QCOMPARE(last.pin_memory, false);
    QCOMPARE(last.devices, 2);
    QCOMPARE(QString::fromStdString(last.precision), QStringLiteral("bf16-mixed"));
    QCOMPARE(last.early_stopping.patience, 2);
    QCOMPARE(QString::fromStdString(last.sharding), QStringLiteral("zero1"));
    QCOMPARE(last.inference_eval, true);
    QCOMPARE(stepOf(plan, "precision").config.speedups.early_stopping.patience, 0);  // not yet
    QVERIFY(QString::fromStdString(stepOf(plan, "early_stopping").note).contains(QStringLiteral("cannot trigger in 1 epoch")));
    QCOMPARE(QString::fromStdString(stepOf(plan, "devices").added), QStringLiteral("devices 1 → 2 CPU processes"));
    for (const auto& s : plan) QVERIFY(wb::validate(s.config).empty());
  }

  void oneDeviceSkipsDevicesAndSharding() {
    auto plan = planLadder(wb::Config{}, cpuCaps(1), false);
    QVERIFY(stepOf(plan, "devices").skipped);
    const auto& sharding = stepOf(plan, "sharding");
    QVERIFY(sharding.skipped);
    QVERIFY(QString::fromStdString(sharding.note).contains(QStringLiteral("needs devices > 1")));
    QCOMPARE(plan.back().config.speedups.devices, 1);
  }

  void emulatedBf16IsSkippedWithTheReason() {
    json caps = cpuCaps();
    caps["speedups"]["precision"]["values"]["bf16-mixed"] = {
        {"available", true}, {"native", false}, {"note", "this CPU has no AVX-512 BF16 or AMX"}};
    auto plan = planLadder(wb::Config{}, caps, true);
    const auto& prec = stepOf(plan, "precision");
    QVERIFY(prec.skipped);
    QVERIFY(QString::fromStdString(prec.note).contains(QStringLiteral("no AVX-512 BF16")));
    QVERIFY(QString::fromStdString(prec.note).contains(QStringLiteral("speedups.precision=bf16-mixed")));
    // Later steps do not carry bf16; with native bf16 the step runs.
    QCOMPARE(QString::fromStdString(plan.back().config.speedups.precision), QStringLiteral("32-true"));
    caps["speedups"]["precision"]["values"]["bf16-mixed"]["native"] = true;
    QVERIFY(!stepOf(planLadder(wb::Config{}, caps, false), "precision").skipped);
  }

  void cudaPlanUsesGpusAndFp16() {
    auto plan = planLadder(wb::Config{}, cudaCaps(), false);
    QVERIFY(!stepOf(plan, "pin_memory").skipped);
    QCOMPARE(stepOf(plan, "workers").config.speedups.workers, 4);
    QCOMPARE(stepOf(plan, "devices").config.speedups.devices, 4);
    QCOMPARE(QString::fromStdString(stepOf(plan, "precision").config.speedups.precision), QStringLiteral("16-mixed"));
  }

  void isolatedAddsEachSpeedupAlone() {
    auto plan = planLadder(wb::Config{}, cpuCaps(), true);
    const auto& alone = stepOf(plan, "precision", true);
    QCOMPARE(QString::fromStdString(alone.config.speedups.precision), QStringLiteral("bf16-mixed"));
    QCOMPARE(alone.config.speedups.workers, 0);  // alone: nothing else on
    QCOMPARE(alone.config.speedups.devices, 1);
    const auto& shard = stepOf(plan, "sharding", true);
    QCOMPARE(shard.config.speedups.devices, 2);  // sharding alone brings the devices it needs
    QCOMPARE(QString::fromStdString(shard.config.speedups.sharding), QStringLiteral("zero1"));
    bool pinAlone = false;
    for (const auto& s : plan) pinAlone = pinAlone || (s.isolated && s.key == "pin_memory");
    QVERIFY(!pinAlone);  // a skipped speedup does not run alone either
    QCOMPARE(QString::fromStdString(alone.slug(9)), QStringLiteral("alone-precision"));
    QCOMPARE(QString::fromStdString(plan[3].slug(3)), QStringLiteral("03-devices"));
  }

  void summaryMediansAndSpeedups() {
    auto plan = planLadder(wb::Config{}, cpuCaps(), true);
    std::vector<LadderStepRuns> steps;
    for (const auto& s : plan) {
      LadderStepRuns r{s, {}, {}};
      if (s.key == "baseline" && !s.isolated) r.runs = {runWith(19, 0.80, 18), runWith(20, 0.81, 19), runWith(24, 0.82, 23)};
      if (s.key == "workers" && !s.isolated) r.runs = {runWith(10, 0.81, 9), runWith(11, 0.81, 10), runWith(12, 0.79, 11)};
      if (s.key == "devices" && !s.isolated) r.runs = {runWith(8, 0.81, 7, 200 << 20)};
      if (s.key == "precision" && !s.isolated) r.failures = {"could not start: bad config"};
      if (s.key == "workers" && s.isolated) r.runs = {runWith(10, 0.81, 9)};
      steps.push_back(std::move(r));
    }
    Ladder ladder = summarizeLadder(steps, std::nullopt);
    QVERIFY(!ladder.target_user_set);
    QCOMPARE(*ladder.target_acc, 0.80);  // the lowest best of the baseline repeats
    const LadderRow& base = ladder.rows[0];
    QCOMPARE(*base.wall_s, 20.0);
    QCOMPARE(*base.wall_min, 19.0);
    QCOMPARE(*base.wall_max, 24.0);
    QCOMPARE(base.reached, 3);
    const LadderRow& workers = ladder.rows[1];
    QCOMPARE(*workers.cumulative, 20.0 / 11.0);  // medians: 20 / 11
    QCOMPARE(workers.reached, 2);         // the 0.79 repeat never reached 0.80
    QCOMPARE(*workers.target_s, 9.5);
    QCOMPARE(*workers.cumulative_target, 19.0 / 9.5);
    const LadderRow& pin = ladder.rows[2];
    QVERIFY(pin.step.skipped);
    QVERIFY(!pin.cumulative);
    const LadderRow& devices = ladder.rows[3];
    QCOMPARE(*devices.marginal, 11.0 / 8.0);  // against workers, the step before that ran
    QCOMPARE(*devices.cumulative, 20.0 / 8.0);
    QVERIFY(QString::fromStdString(ladder.rows[4].problems).contains(QStringLiteral("could not start")));

    Table t = ladderTable(ladder);
    QCOMPARE(t.rows.size(), ladder.rows.size());
    QCOMPARE(QString::fromStdString(t.rows[0][2].text), QStringLiteral("20.0 s (19.0 s–24.0 s)"));
    QVERIFY(QString::fromStdString(t.rows[1][3].text).contains(QStringLiteral("(2/3 reached)")));
    QCOMPARE(QString::fromStdString(t.rows[2][9].text), QStringLiteral("skipped: needs CUDA; not available on this machine"));
    QCOMPARE(QString::fromStdString(t.rows[2][0].text), QStringLiteral("2"));
    bool aloneRow = false;
    for (const auto& row : t.rows) aloneRow = aloneRow || (row[0].text == "alone" && row[4].text == "2.00×");
    QVERIFY(aloneRow);

    Drawing chart = ladderChart(ladder);
    int bars = 0;
    for (const auto& r : chart.rects) bars += r.w < chart.width ? 1 : 0;
    QCOMPARE(bars, 8);  // cumulative steps only, skipped ones drawn empty
    json j = ladderJson(ladder);
    QCOMPARE(int(j["steps"].size()), int(ladder.rows.size()));
    QCOMPARE(j["steps"][1]["speedup"]["cumulative"].get<double>(), 20.0 / 11.0);

    // ladder.json reads back into the same ladder (what the GUI's "Open ladder" shows).
    auto back = ladderFromJson(json::parse(renderJson(buildLadderReport(ladder, steps))));
    QVERIFY(back.ok());
    QCOMPARE(back->rows.size(), ladder.rows.size());
    QCOMPARE(*back->target_acc, *ladder.target_acc);
    for (size_t i = 0; i < ladder.rows.size(); ++i) {
      QCOMPARE(back->rows[i].step.key, ladder.rows[i].step.key);
      QCOMPARE(back->rows[i].step.skipped, ladder.rows[i].step.skipped);
      QCOMPARE(back->rows[i].cumulative.has_value(), ladder.rows[i].cumulative.has_value());
      QCOMPARE(back->rows[i].step.config.speedups.workers, ladder.rows[i].step.config.speedups.workers);
    }
    QCOMPARE(renderText(ladderTable(*back)), renderText(ladderTable(ladder)));
    QVERIFY(!ladderFromJson(json::object()).ok());

    Report rep = buildLadderReport(ladder, steps);
    QCOMPARE(QString::fromStdString(rep.figures[0].file), QStringLiteral("ladder.svg"));
    QVERIFY(!rep.advice.empty());
  }
};

QTEST_APPLESS_MAIN(TestLadder)
#include "test_ladder.moc"
