// The ladder plan (what runs, what is skipped and why, for CPU and CUDA capabilities) and its
// summary (medians over repeats, speedups with their intervals and verdicts from the pairs, the
// ladder-level status of a cancelled ladder, the table and the chart), and a ladder's folder whose
// records cannot be read: named, never rebuilt over in silence.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "report_fixture.h"
#include "wb/report/export.h"
#include "wb/ladder/ladder.h"
#include "wb/ladder/ladder_run.h"

#include <cmath>
#include <map>

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::records;
using namespace wb::advice;
using namespace wb::report;
using namespace wb::render;
using namespace wb::stats;
using namespace wb::ladder;

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

// One repeat: best val acc `acc` reached at `accT`, ended at `wall`; otherLoad: summary.cpu.
RunRecord runWith(double wall, double acc, double accT, int64_t rss = 100 << 20, double sps = 500,
                  double otherLoad = 0.0) {
  FakeRun r;
  r.start().step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, rss).eval(1, accT, acc).end("ok", wall);
  r.measured("train_samples_per_s", sps).cpu(otherLoad);
  static int n = 0;
  return r.record("r" + std::to_string(++n));
}

// A cumulative-only plan on the CPU machine with `runs` for the steps named; the rest ran nothing.
std::vector<LadderStepRuns> stepsWith(const std::map<std::string, std::vector<RunRecord>>& runs) {
  std::vector<LadderStepRuns> steps;
  for (const auto& s : planLadder(wb::Config{}, cpuCaps(), false)) {
    LadderStepRuns r{s, {}, {}};
    if (auto it = runs.find(s.key); it != runs.end()) r.runs = it->second;
    steps.push_back(std::move(r));
  }
  return steps;
}

const LadderRow& rowOf(const Ladder& l, const std::string& key) {
  for (const auto& r : l.rows)
    if (r.step.key == key && !r.step.isolated) return r;
  throw std::logic_error("no row " + key);
}

// Column of the ladder table by key.
int column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return int(i);
  return -1;
}

QString cell(const Table& t, size_t row, const std::string& key) {
  return QString::fromStdString(t.rows[row][size_t(column(t, key))].text);
}

const Bar& barOf(const BarChartSpec& spec, const std::string& label) {
  for (const auto& b : spec.bars)
    if (b.label == label) return b;
  throw std::logic_error("no bar " + label);
}

}  // namespace

// The looks of an adaptive ladder (up to 5 pairs a step) on a host measured at ±band.
wb::stats::Sequential floored(double band) {
  wb::stats::Sequential s;
  s.floor_band = band;
  return s;
}

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
             QStringLiteral("baseline,workers,pin_memory(skipped),devices,precision,early_stopping,sharding,inference_eval,"
                                   "decoded_cache(skipped),channels_last,fused_optimizer,grad_accumulation,"
                                   "cudnn_benchmark(skipped),tf32(skipped)"));
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

  // ladder --lr-scaling: every step on more than one device scales its lr; the one-device steps
  // (the baseline among them) keep optim.lr as it is; the devices step says so in its `added`.
  void lrScalingAppliesFromTheDevicesStep_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("devicesAdded");  // what the devices step says it adds
    QTest::newRow("linear") << "linear" << "devices 1 → 2 CPU processes, lr 0.02 (linear ×2)";
    QTest::newRow("sqrt") << "sqrt" << "devices 1 → 2 CPU processes, lr 0.0141421 (sqrt ×1.41421)";
  }
  void lrScalingAppliesFromTheDevicesStep() {
    QFETCH(QString, mode);
    QFETCH(QString, devicesAdded);
    auto plan = planLadder(wb::Config{}, cpuCaps(), true);
    QVERIFY(applyLadderLrScaling(plan, mode.toStdString()).ok());
    for (const auto& s : plan) {
      const bool many = s.config.speedups.devices > 1;
      QCOMPARE(QString::fromStdString(s.config.optim.lr_scaling), many ? mode : QStringLiteral("none"));
    }
    QCOMPARE(QString::fromStdString(stepOf(plan, "devices").added), devicesAdded);
    QVERIFY(QString::fromStdString(stepOf(plan, "sharding", true).added).contains(QStringLiteral(", lr ")));
    QVERIFY(!QString::fromStdString(stepOf(plan, "precision").added).contains(QStringLiteral(", lr ")));  // inherits it
    QCOMPARE(QString::fromStdString(stepOf(plan, "precision").config.optim.lr_scaling), mode);
    QCOMPARE(QString::fromStdString(stepOf(plan, "baseline").config.optim.lr_scaling), QStringLiteral("none"));
  }
  void lrScalingOnOneDeviceOrBadModes() {
    auto plan = planLadder(wb::Config{}, cpuCaps(1), false);  // one process only: devices is skipped
    QVERIFY(applyLadderLrScaling(plan, "linear").ok());
    for (const auto& s : plan) QCOMPARE(QString::fromStdString(s.config.optim.lr_scaling), QStringLiteral("none"));
    // An explicit none undoes a config's own setting on the steps with devices.
    wb::Config user;
    user.optim.lr_scaling = "linear";
    auto undone = planLadder(user, cpuCaps(), false);
    QVERIFY(applyLadderLrScaling(undone, "none").ok());
    QCOMPARE(QString::fromStdString(stepOf(undone, "devices").config.optim.lr_scaling), QStringLiteral("none"));
    QCOMPARE(QString::fromStdString(stepOf(undone, "devices").added), QStringLiteral("devices 1 → 2 CPU processes"));
    auto bad = applyLadderLrScaling(plan, "cubic");
    QVERIFY(!bad.ok());
    QCOMPARE(QString::fromStdString(bad.error().message), QStringLiteral("--lr-scaling cubic: must be one of none, linear, sqrt"));
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
    QCOMPARE(*workers.cumulative, std::cbrt(19.0 * 20 * 24) / std::cbrt(10.0 * 11 * 12));  // geometric means
    QCOMPARE(workers.reached, 2);         // the 0.79 repeat never reached 0.80
    QCOMPARE(*workers.target_s, 9.5);
    QCOMPARE(*workers.cumulative_target, std::cbrt(18.0 * 19 * 23) / std::sqrt(90.0));  // unpaired: the groups' mean log times
    const LadderRow& pin = ladder.rows[2];
    QVERIFY(pin.step.skipped);
    QVERIFY(!pin.cumulative);
    const LadderRow& devices = ladder.rows[3];
    QCOMPARE(*devices.marginal, 11.0 / 8.0);  // against workers, the step before that ran
    QCOMPARE(*devices.cumulative, std::cbrt(19.0 * 20 * 24) / 8.0);
    QVERIFY(QString::fromStdString(ladder.rows[4].problems).contains(QStringLiteral("could not start")));

    Table t = ladderTable(ladder);
    QCOMPARE(t.rows.size(), ladder.rows.size());
    QCOMPARE(cell(t, 0, "wall_s"), QStringLiteral("20.0 s (19.0 s–24.0 s)"));
    QVERIFY(cell(t, 1, "time_to_target_s").contains(QStringLiteral("(2/3 reached)")));
    QVERIFY(cell(t, 1, "cumulative_target").startsWith(QStringLiteral("2.10× [")));  // the headline, with its interval
    QCOMPARE(cell(t, 2, "note"), QStringLiteral("skipped: needs CUDA; not available on this machine"));
    QCOMPARE(cell(t, 2, "step"), QStringLiteral("2"));
    QCOMPARE(cell(t, 0, "train_samples_per_s"), QStringLiteral("500/s"));
    bool aloneRow = false;
    for (size_t i = 0; i < t.rows.size(); ++i)
      aloneRow = aloneRow || (cell(t, i, "step") == QStringLiteral("alone") && cell(t, i, "cumulative").startsWith(QStringLiteral("2.09×")));
    QVERIFY(aloneRow);

    Drawing chart = ladderChart(ladder);
    int bars = 0;
    for (const auto& r : chart.rects) bars += r.w < chart.width ? 1 : 0;
    int cumulative = 0;
    for (const auto& r : ladder.rows) cumulative += r.step.isolated ? 0 : 1;
    QCOMPARE(bars, cumulative);  // cumulative steps only, skipped ones drawn empty
    json j = ladderJson(ladder);
    QCOMPARE(int(j["steps"].size()), int(ladder.rows.size()));
    QCOMPARE(j["steps"][1]["speedup"]["cumulative"].get<double>(), std::cbrt(19.0 * 20 * 24) / std::cbrt(10.0 * 11 * 12));

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

    // An older ladder.json (nulls where there was no value, no status) loads; keys a newer writer
    // added, at the top and in a step, are written back as they were.
    json older = j;
    older.erase("status");
    older["steps"][0]["speedup"]["cumulative"] = nullptr;
    older["newer_field"] = {{"k", 1}};
    older["steps"][1]["newer_step_field"] = "kept";
    auto fromOlder = ladderFromJson(older);
    QVERIFY(fromOlder.ok());
    QCOMPARE(fromOlder->status, std::string("ok"));
    QVERIFY(!fromOlder->rows[0].cumulative);
    QCOMPARE(fromOlder->rows[1].wall_min, ladder.rows[1].wall_min);
    QCOMPARE(fromOlder->rows[1].estimates.to_target.pairs, ladder.rows[1].estimates.to_target.pairs);
    const json rewritten = ladderJson(*fromOlder);
    QCOMPARE(rewritten["newer_field"], older["newer_field"]);
    QCOMPARE(rewritten["steps"][1]["newer_step_field"].get<std::string>(), std::string("kept"));

    Report rep = buildLadderReport(ladder, steps);
    QCOMPARE(QString::fromStdString(rep.figures[0].file), QStringLiteral("ladder.svg"));
    QVERIFY(!rep.advice.empty());
  }

  // The ladder report's advisor reads each step's stored worker probe: the data-bound baseline is
  // told the probe's count and date, and without the probe the rule of thumb.
  void reportAdvisesTheStoredProbesWorkerCount() {
    FakeRun r;
    const std::vector<double> split = {6.1, 0, 1.5, 2.0, 0.4, 0};  // 61 % of each step waits for data
    r.start("cpu", 4).step(1, 10, 640, 1, 1.0, split).step(1, 20, 1280, 2, 0.9, split).step(1, 30, 1920, 3, 0.8, split);
    r.eval(1, 5, 0.7).end("ok", 6);
    const RunRecord base = r.record("base");
    const auto steps = stepsWith({{"baseline", {base}}});
    const Ladder ladder = summarizeLadder(steps, std::nullopt);
    // The stored probe's advice: 2 workers, measured 2026-12-01 08:40 UTC, the loader the bottleneck.
    WorkersAdvice probe;
    probe.workers = 2;
    probe.measured = true;
    probe.date = "2026-12-01 08:40 UTC";
    const WorkersAdviceFor stored = [&](const RunRecord& run) {
      return run.dir == base.dir ? probe : ruleOfThumbFor(run);
    };
    auto dataBound = [](const Report& rep) {
      for (const auto& v : rep.advice.at(0).verdicts)
        if (v.code == "data-bound") return v.text;
      return std::string("(no data-bound verdict)");
    };
    const std::string probed = dataBound(buildLadderReport(ladder, steps, stored));
    QVERIFY2(probed.find("raise loader workers from 0 to 2 (the worker probe of 2026-12-01 08:40 UTC") != std::string::npos,
             probed.c_str());
    const std::string plain = dataBound(buildLadderReport(ladder, steps));
    QVERIFY2(plain.find("to 4 (the rule of thumb min(cores, 4)") != std::string::npos, plain.c_str());
  }

  // A step whose interval could not tell a 2× change from none (a ladder printed the multi-tensor
  // step as 1.01× [0.03, 30.13], its chart's axis stretched to 30×) reads "not measured" with why
  // and draws no error bar.
  void aStepWhoseIntervalIsNoMeasurementSaysSo() {
    Ladder ladder = summarizeLadder(stepsWith({{"baseline", {runWith(151, 0.70, 150)}}, {"workers", {runWith(150, 0.70, 149)}}}),
                                    std::nullopt);
    LadderRow& workers = const_cast<LadderRow&>(rowOf(ladder, "workers"));
    workers.estimates.to_target.point = 1.01, workers.estimates.to_target.lo = 0.03, workers.estimates.to_target.hi = 30.13;
    workers.estimates.to_target.verdict = Verdict::WithinNoise;
    const LadderHeadline h = ladderHeadline(workers);
    QVERIFY2(h.text.rfind("not measured: ", 0) == 0 && h.text.find("[0.03") == std::string::npos, h.text.c_str());
    QVERIFY(!h.lo && !h.hi);
    for (const Bar& b : ladderBars(ladder).bars) QVERIFY2(!(b.hi > 2), b.label.c_str());
  }

  // The field report: workers sped the loop up 15× but accuracy fell from 68.5 % to 62.8 % and
  // never reached the target. The headline is at equal accuracy, so that step has none.
  void stepBelowTargetHasNoHeadline() {
    Ladder ladder = summarizeLadder(stepsWith({{"baseline", {runWith(151, 0.685, 150)}},
                                               {"workers", {runWith(10, 0.628, 9)}},
                                               {"devices", {runWith(60, 0.70, 50)}}}),
                                    std::nullopt);
    const LadderRow& workers = rowOf(ladder, "workers");
    QVERIFY(workers.cumulative.has_value());  // the wall-time speedup is still measured…
    QVERIFY(!workers.cumulative_target);      // …but there is no speedup at equal accuracy
    const LadderHeadline h = ladderHeadline(workers);
    QVERIFY(!h.speedup);
    QCOMPARE(QString::fromStdString(h.text), QStringLiteral("not reached"));
    QCOMPARE(*rowOf(ladder, "devices").cumulative_target, 3.0);  // 150 / 50
    QVERIFY(!rowOf(ladder, "devices").marginal_target);          // the step before has no time to target

    Table t = ladderTable(ladder);
    QCOMPARE(cell(t, 1, "cumulative_target"), QStringLiteral("not reached · 62.8 %"));
    QVERIFY(!t.rows[1][size_t(column(t, "cumulative_target"))].number);
    QCOMPARE(cell(t, 1, "time_to_target_s"), QStringLiteral("not reached"));
    QCOMPARE(cell(t, 1, "marginal_target"), QStringLiteral("–"));
    QCOMPARE(cell(t, 1, "cumulative"), QStringLiteral("15.1× (1 run each: no interval)"));  // secondary, on wall time
    QCOMPARE(QString::fromStdString(t.columns[size_t(column(t, "cumulative"))].title), QStringLiteral("× wall"));

    const BarChartSpec bars = ladderBars(ladder);
    QVERIFY(QString::fromStdString(bars.title).contains(QStringLiteral("speedup to 68.50 % val acc")));
    QVERIFY(!QString::fromStdString(bars.title).contains(QStringLiteral("wall")));
    const Bar& w = barOf(bars, "+ workers");
    QVERIFY(w.skipped);
    QCOMPARE(QString::fromStdString(w.annotation), QStringLiteral("not reached"));
    QCOMPARE(QString::fromStdString(w.detail), QStringLiteral("acc 62.8 %"));
    QCOMPARE(barOf(bars, "+ devices").value, 3.0);
    // Nothing in the drawing claims the wall-time multiplier, and only reached steps are bold.
    for (const auto& text : ladderChart(ladder).texts) {
      QVERIFY2(text.text.find("15.1") == std::string::npos, text.text.c_str());
      if (text.bold && text.text != bars.title) QVERIFY2(text.text.find("×") != std::string::npos, text.text.c_str());
    }
  }

  void withoutATargetTheChartSaysWallTime() {
    FakeRun noEval;
    noEval.start().step(1, 10, 640, 1, 1.0).end("ok", 20);
    Ladder ladder = summarizeLadder(stepsWith({{"baseline", {noEval.record("b")}}}), std::nullopt);
    QVERIFY(!ladder.target_acc);
    QVERIFY(QString::fromStdString(ladderBars(ladder).title).contains(QStringLiteral("wall-time speedup")));
  }

  void contendedStepShowsNoSpeedup_data() {
    QTest::addColumn<bool>("baselineContended");
    QTest::addColumn<QString>("note");
    QTest::newRow("the step's own repeats") << false << "another process used 0.9 of 2 cores";
    QTest::newRow("the baseline") << true << "the baseline: another process used 0.9 of 2 cores";
  }
  void contendedStepShowsNoSpeedup() {
    QFETCH(bool, baselineContended);
    QFETCH(QString, note);
    const double baseLoad = baselineContended ? 0.9 : 0.0, stepLoad = baselineContended ? 0.0 : 0.9;
    Ladder ladder = summarizeLadder(
        stepsWith({{"baseline", {runWith(20, 0.80, 18, 100 << 20, 500, baseLoad)}},
                   {"workers", {runWith(10, 0.81, 9, 100 << 20, 900, stepLoad), runWith(11, 0.81, 9, 100 << 20, 1000, stepLoad)}}}),
        std::nullopt);
    const LadderRow& workers = rowOf(ladder, "workers");
    QCOMPARE(workers.contended, baselineContended ? 0 : 2);
    QCOMPARE(QString::fromStdString(workers.contention), note);
    QCOMPARE(*workers.train_sps, 950.0);  // median of the repeats' summary.train_samples_per_s
    QVERIFY(!ladderHeadline(workers).speedup);
    Table t = ladderTable(ladder);
    QCOMPARE(cell(t, 1, "cumulative_target"), QStringLiteral("contended"));
    QCOMPARE(cell(t, 1, "cumulative"), QStringLiteral("contended"));
    QVERIFY(cell(t, 1, "note").contains(note));
    const Bar& w = barOf(ladderBars(ladder), "+ workers");
    QVERIFY(w.skipped);
    QCOMPARE(QString::fromStdString(w.annotation), QStringLiteral("contended"));
    // ladder.json keeps the numbers and the flag; reading it back shows the same table.
    auto back = ladderFromJson(ladderJson(ladder));
    QVERIFY(back.ok());
    QCOMPARE(renderText(ladderTable(*back)), renderText(t));
  }

  // The ladder runs a contended rung again: a clean repeat stands, the contended one is left out.
  void aContendedRepeatIsLeftOutWhenACleanOneExists() {
    Ladder ladder = summarizeLadder(
        stepsWith({{"baseline", {runWith(20, 0.80, 18, 100 << 20, 500)}},
                   {"workers", {runWith(5, 0.81, 4, 100 << 20, 4000, 0.9), runWith(10, 0.81, 9, 100 << 20, 1000)}}}),
        std::nullopt);
    const LadderRow& workers = rowOf(ladder, "workers");
    QCOMPARE(workers.contended, 1);
    QVERIFY(workers.contention.empty());
    QCOMPARE(*workers.train_sps, 1000.0);  // the clean repeat's, not the median with the contended one
    QCOMPARE(*workers.wall_s, 10.0);
    QVERIFY(ladderHeadline(workers).speedup);
    QVERIFY(QString::fromStdString(workers.problems).contains(QStringLiteral("1 run(s) measured under contention left out")));
  }

  // Pairs: each step run next to a baseline run, the speedup the geometric mean of the pairs'
  // ratios with its interval; "faster" (bold) only by the verdict rule (wb/stats/stats.h), else
  // "within noise" (not bold); one pair is labelled as such.
  void pairedStepsGiveIntervalsAndVerdicts_data() {
    QTest::addColumn<QList<double>>("baseline");
    QTest::addColumn<QList<double>>("step");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<bool>("bold");
    QTest::newRow("3x, 3 pairs") << QList<double>{30, 33, 31} << QList<double>{10, 11, 10.5} << "faster" << true;
    QTest::newRow("A/A, 5 pairs") << QList<double>{20, 21, 20, 22, 20} << QList<double>{20.5, 20, 21, 21, 19.5} << "within noise"
                                  << false;
    QTest::newRow("3x, 1 pair") << QList<double>{30} << QList<double>{10} << "1 run each: no interval" << false;
  }
  void pairedStepsGiveIntervalsAndVerdicts() {
    QFETCH(QList<double>, baseline);
    QFETCH(QList<double>, step);
    QFETCH(QString, verdict);
    QFETCH(bool, bold);
    auto steps = stepsWith({});
    for (auto& s : steps) {
      if (s.step.key != "workers") continue;
      for (int i = 0; i < baseline.size(); ++i) {
        s.references.push_back(runWith(baseline[i], 0.80, baseline[i] - 1));
        s.runs.push_back(runWith(step[i], 0.80, step[i] - 1));
        s.counted.push_back(true);
      }
      steps[0].runs = s.references;  // the baseline step holds every baseline run
    }
    const Ladder ladder = summarizeLadder(steps, std::nullopt, floored(0.15));
    const LadderRow& workers = rowOf(ladder, "workers");
    QCOMPARE(workers.estimates.to_target.pairs, int(baseline.size()));
    QCOMPARE(QString::fromStdString(verdictWord(workers.estimates.to_target.verdict)), verdict);
    const LadderHeadline h = ladderHeadline(workers);
    QVERIFY(h.speedup);
    QVERIFY2(QString::fromStdString(h.text).contains(verdict), h.text.c_str());
    QCOMPARE(h.emphasise, bold);
    if (verdict == QLatin1String("faster")) QVERIFY(*h.lo > 1.15);
    const Bar& b = barOf(ladderBars(ladder), "+ workers");
    QCOMPARE(b.bold, bold);
    QCOMPARE(std::isfinite(b.lo), baseline.size() > 1);
    const Table t = ladderTable(ladder);
    QVERIFY(cell(t, 1, "cumulative_target").contains(verdict));
    QCOMPARE(t.rows[1][size_t(column(t, "cumulative_target_lo"))].number.has_value(), baseline.size() > 1);
    auto back = ladderFromJson(ladderJson(ladder));
    QVERIFY(back.ok());
    QCOMPARE(renderText(ladderTable(*back)), renderText(t));
  }

  // A greedy ladder's record: each row says kept or dropped and why (a "Kept?" column), the
  // steps' speedups are over their own references, the kept row closes the table and the chart,
  // and ladder.json keeps it all.
  void aGreedyLadderSaysWhatItKept() {
    auto steps = stepsWith({});
    LadderStep kept;
    kept.key = kKeptStep;
    kept.added = "the steps kept (workers 2), against the baseline";
    steps.push_back({kept, {}, {}});
    for (auto& s : steps) {
      const bool workers = s.step.key == "workers", precision = s.step.key == "precision";
      if (!workers && !precision && s.step.key != kKeptStep) continue;
      s.step.skipped = false;
      for (int i = 0; i < 3; ++i) {
        const double ref = 30 + i, var = workers || s.step.key == kKeptStep ? ref / 3 : ref * 3;
        s.references.push_back(runWith(ref, 0.80, ref - 1));
        s.runs.push_back(runWith(var, 0.80, var - 1));
        s.counted.push_back(true);
      }
      if (workers) s.decision = "kept: 2.00× [1.90, 2.10] faster", steps[0].runs = s.references;
      if (precision) s.decision = "dropped: slower, 0.67× [0.60, 0.70] slower";
    }
    const Ladder ladder = summarizeLadder(steps, std::nullopt, floored(0.15), {"ok", "", true});
    QVERIFY(ladder.greedy);
    QVERIFY(keptRow(ladder));
    QCOMPARE(QString::fromStdString(verdictWord(rowOf(ladder, "precision").estimates.to_target.verdict)), QStringLiteral("slower"));
    QVERIFY(!rowOf(ladder, "precision").marginal_target);  // no "step before": its reference is what was kept
    const Table t = ladderTable(ladder);
    QVERIFY(QString::fromStdString(t.title).startsWith(QStringLiteral("Speedup ladder, greedy")));
    QCOMPARE(cell(t, 1, "decision"), QStringLiteral("kept: 2.00× [1.90, 2.10] faster"));
    QVERIFY(cell(t, 4, "decision").startsWith(QStringLiteral("dropped: slower")));
    QCOMPARE(cell(t, int(t.rows.size()) - 1, "step"), QStringLiteral("kept"));
    // No "Step ×" column: each step's × to target is already its own (against what was kept).
    QCOMPARE(column(t, "marginal_target"), -1);
    for (const auto& row : t.rows) QCOMPARE(row.size(), t.columns.size());
    QVERIFY(cell(t, int(t.rows.size()) - 1, "cumulative_target").contains(QStringLiteral("faster")));
    const BarChartSpec bars = ladderBars(ladder);
    QVERIFY(QString::fromStdString(bars.title).contains(QStringLiteral("greedy")));
    QVERIFY(QString::fromStdString(barOf(bars, "+ precision").detail).startsWith(QStringLiteral("dropped")));
    QCOMPARE(QString::fromStdString(bars.bars.back().label), QStringLiteral("kept"));
    auto back = ladderFromJson(ladderJson(ladder));
    QVERIFY(back.ok());
    QVERIFY(back->greedy);
    QCOMPARE(renderText(ladderTable(*back)), renderText(t));
  }

  // A cancelled ladder: the status says at which step, the steps not run say so and give no speedup.
  // By parts the baseline runs no run of its own: the ladder's target is its steps', the
  // experiment's reference runs' fair target, and the title says so.
  void aLadderByPartsTakesTheReferenceRunsTarget() {
    LadderStepRuns base, workers;
    base.step.key = "baseline", base.step.added = "all speedups off";
    workers.step.key = "workers", workers.step.added = "loader workers 0 → 2";
    workers.settled = "by parts";
    workers.by_parts = {{"method", "composed"}, {"reached", true}, {"target_acc", 0.72}, {"words", "1.00× to target, within noise"},
                        {"estimate", {{"to_target", {{"point", 1.0}, {"lo", 0.99}, {"hi", 1.01}, {"verdict", "within noise"}}}}}};
    const Ladder l = summarizeLadder({base, workers}, std::nullopt, {}, {"ok", "", true});
    QVERIFY(l.target_acc.has_value());
    QCOMPARE(*l.target_acc, 0.72);
    const Table t = ladderTable(l);
    QVERIFY2(t.title.find("the reference runs'") != std::string::npos, t.title.c_str());
    QCOMPARE(QString::fromStdString(t.rows[1][2].text), QStringLiteral("by parts"));  // Pairs: none, by parts
    const auto back = ladderFromJson(ladderJson(l));
    QVERIFY(back.ok() && back->target_from_references);
  }

  void aCancelledLadderSaysWhereAndTheRestIsNotRun() {
    auto steps = stepsWith({{"baseline", {runWith(20, 0.80, 18)}}});
    for (auto& s : steps)
      if (!s.step.skipped && s.step.key != "baseline") s.not_run = true;
    const Ladder ladder = summarizeLadder(steps, std::nullopt, floored(0.15), {"cancelled", "workers"});
    QCOMPARE(QString::fromStdString(ladder.status_note), QStringLiteral("cancelled at step workers"));
    const LadderRow& workers = rowOf(ladder, "workers");
    QVERIFY(!workers.cumulative && !workers.cumulative_target);
    QCOMPARE(QString::fromStdString(ladderHeadline(workers).text), QStringLiteral("not run (cancelled)"));
    const Table t = ladderTable(ladder);
    QVERIFY(QString::fromStdString(t.title).contains(QStringLiteral("cancelled at step workers")));
    QCOMPARE(cell(t, 1, "note"), QStringLiteral("not run (cancelled)"));
    QCOMPARE(cell(t, 1, "cumulative_target"), QStringLiteral("–"));
    const json j = ladderJson(ladder);
    QCOMPARE(j["status"].get<std::string>(), std::string("cancelled"));
    QCOMPARE(j["cancelled_at"].get<std::string>(), std::string("workers"));
    auto back = ladderFromJson(j);
    QVERIFY(back.ok());
    QCOMPARE(back->status_note, ladder.status_note);
    QCOMPARE(renderText(ladderTable(*back)), renderText(t));
    QCOMPARE(QString::fromStdString(ladderFromJson(json{{"steps", json::array()}})->status), QStringLiteral("ok"));  // older files
  }

  // A greedy ladder continued from a folder whose plan.json cannot be read (cut mid-file, emptied,
  // no record) or holds another plan is refused naming it, before anything runs, and left as it
  // is. Its ladder.json, the result written again from the steps, is kept aside and said.
  void aDamagedLadderRecordIsNamedAndKept_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("named");  // "": the ladder goes on
    QTest::newRow("plan.json cut mid-file") << "plan.json" << R"({"steps": [{"key": "baseline")" << "is unreadable: it is cut mid-file";
    QTest::newRow("plan.json emptied") << "plan.json" << "" << "is unreadable: it is empty";
    QTest::newRow("plan.json not a record") << "plan.json" << "[]" << "is unreadable: it holds a JSON array";
    QTest::newRow("plan.json of another plan") << "plan.json" << R"({"steps": [{"key": "baseline"}], "command": 1})"
                                               << "holds the pairs of another plan";
    QTest::newRow("ladder.json cut mid-file") << "ladder.json" << R"({"ladder": {"steps")" << "";
  }
  void aDamagedLadderRecordIsNamedAndKept() {
    QFETCH(QString, file);
    QFETCH(QString, damage);
    QFETCH(QString, named);
    QTemporaryDir dir;
    wb::Config user;
    user.train.epochs = 1;
    LadderOptions o;
    o.plan = planLadder(user, cpuCaps(), false);
    o.out = dir.path().toStdString();
    std::atomic<bool> stop{true};  // nothing runs
    o.hooks.stop = &stop;
    std::FILE* log = std::tmpfile();
    o.hooks.log = log;
    const std::filesystem::path record = o.out / file.toStdString();
    std::ofstream(record, std::ios::binary) << damage.toStdString();
    auto r = runLadder(o);
    std::fflush(log), std::rewind(log);
    std::string said;
    for (int ch; (ch = std::fgetc(log)) != EOF;) said += char(ch);
    std::fclose(log);
    const std::filesystem::path kept = named.isEmpty() ? o.out / "ladder.unreadable-1.json" : record;
    std::ifstream in(kept, std::ios::binary);
    QCOMPARE(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), damage.toStdString());
    if (named.isEmpty()) {
      QVERIFY2(said.find(record.string() + " is unreadable: it is cut mid-file") != std::string::npos &&
                   said.find("kept as ladder.unreadable-1.json") != std::string::npos,
               said.c_str());
      return;
    }
    QVERIFY(!r.ok());
    QCOMPARE(int(r.error().code), int(wb::Errc::InvalidConfig));
    const QString m = QString::fromStdString(r.error().message);
    QVERIFY2(m.contains(QString::fromStdString(o.out.string())) && m.contains(named), qPrintable(m));
  }
};

QTEST_APPLESS_MAIN(TestLadder)
#include "test_ladder.moc"
