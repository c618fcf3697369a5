// Advisor verdicts: each row names a scenario (a run, and maybe a reference or a stored worker
// probe, whose events call for one verdict), and checks the verdict's code and the numbers in its
// sentence. Also: the one rule for the recommended worker count (the stored probe's, read from
// it in tests/core/probe).
#include <QtTest/QtTest>

#include <map>

#include "report_fixture.h"
#include "wb/proto/flops_record.h"
#include "wb/advice/actions.h"
#include "wb/advice/advisor.h"
#include "wb/stats/stats.h"
#include "wb/advice/workers_advice.h"
#include "wb/report/report.h"

using fixture::FakeRun;
using fixture::withSplit;
using nlohmann::json;
using namespace wb::records;
using namespace wb::compare;
using namespace wb::advice;
using namespace wb::report;
using namespace wb::stats;

namespace {

// One scenario: the run (and, when the verdict needs one, the reference) whose events call for
// a verdict. Built by name, so a row says which situation it checks.
struct Scenario {
  FakeRun run, ref;
  bool useRef = false;
  std::optional<WorkersAdvice> workers;  // the stored worker probe's advice handed to the advisor
};

using Builder = Scenario (*)();

Scenario split(std::vector<double> ms, int workers, int cores) {
  Scenario s;
  s.run = withSplit(std::move(ms), workers, cores);
  return s;
}
Scenario dataBoundFewWorkers() { return split({6.1, 0, 1.5, 2.0, 0.4, 0}, 1, 4); }
Scenario dataBoundMaxWorkers() { return split({6.1, 0, 1.5, 2.0, 0.4, 0}, 4, 8); }

// What a worker probe of `run`'s experiment measured on 2026-12-01 08:40 UTC: its recommended
// count, and whether the loader alone was fast enough not to be the bottleneck.
WorkersAdvice probed(int recommended, bool notBottleneck) {
  WorkersAdvice a;
  a.workers = recommended;
  a.measured = true;
  a.date = "2026-12-01 08:40 UTC";
  a.data_not_bottleneck = notBottleneck;
  return a;
}
Scenario probedDataBound(int workers, int recommended, bool notBottleneck) {
  Scenario s = split({6.1, 0, 1.5, 2.0, 0.4, 0}, workers, 4);
  s.workers = probed(recommended, notBottleneck);
  return s;
}
// The loader is slow (8 ms a batch, a 10 ms step): 2 workers reach the best rate.
Scenario dataBoundProbedTwo() { return probedDataBound(1, 2, false); }
Scenario dataBoundProbedTwoHasFour() { return probedDataBound(4, 2, false); }
// The loader alone makes a batch in 0.1 ms: the probe found loading is not what a step waits for.
Scenario dataBoundProbedNotBottleneck() { return probedDataBound(1, 0, true); }
Scenario computeBound() { return split({0.5, 0, 3.0, 5.0, 1.5, 0}, 0, 4); }

Scenario fp16Skips(int64_t growthAt) {
  Scenario s;
  s.run.set("speedups.precision", "16-mixed").start("cuda:0");
  s.run.step(1, 10, 640, 1, 1).amp(65536, 10).step(1, growthAt, 6400, 2, 1).amp(8192, 14);
  s.run.step(2, 1000, 64000, 3, 1).amp(8192, 14);
  return s;
}
Scenario fp16EarlySkips() { return fp16Skips(50); }
Scenario fp16LateSkips() { return fp16Skips(900); }

Scenario sharding(double peakRatio) {
  Scenario s;
  const std::vector<double> plain = {1, 0, 4, 4, 1, 0}, sharded = {1, 0, 4, 4, 1.6, 0};
  s.ref.set("speedups.devices", 2).start();
  s.ref.step(1, 10, 640, 1, 1, plain, 1000 << 20).step(1, 20, 1280, 2, 1, plain, 1000 << 20);
  s.run.set("speedups.devices", 2).set("speedups.sharding", "zero1").start();
  const int64_t peak = static_cast<int64_t>((1000 << 20) * peakRatio);
  s.run.step(1, 10, 640, 1, 1, sharded, peak).step(1, 20, 1280, 2, 1, sharded, peak);
  s.useRef = true;
  return s;
}
Scenario shardingSaves() { return sharding(0.53); }
Scenario shardingSavesNothing() { return sharding(0.99); }

Scenario earlyStopped() {
  Scenario s;
  s.run.set("train.epochs", 10).set("speedups.early_stopping.patience", 2).start();
  for (int e = 1; e <= 3; ++e) s.run.epoch(e, 10.0 * e, 10.0);
  s.run.earlyStop(1).end("early-stopped", 31);
  return s;
}
Scenario earlyStopCannotTrigger() {
  Scenario s;
  s.run.set("train.epochs", 1).set("speedups.early_stopping.patience", 2).start().epoch(1, 10, 10).end("ok", 11);
  return s;
}
Scenario inferenceEval() {
  Scenario s;
  s.ref.set("speedups.inference_eval", false).start().eval(1, 10, 0.8, 400);
  s.run.set("speedups.inference_eval", true).start().eval(1, 9, 0.8, 200);
  s.useRef = true;
  return s;
}
Scenario pinMemoryInactive() {
  Scenario s;
  s.run.set("speedups.pin_memory", true)
      .start("cpu", 2, {{"pin_memory", {true, false, "needs CUDA; not available"}}, {"workers", {false, false, ""}}});
  return s;
}
Scenario bf16SlowerAndLessAccurate() {
  Scenario s;
  s.ref.start().eval(1, 9, 0.85).end("ok", 10);
  s.run.set("speedups.precision", "bf16-mixed").start().eval(1, 11, 0.83).end("ok", 12);
  s.useRef = true;
  return s;
}
Scenario dataWarnings() {
  Scenario s;
  s.run.start().warning("corrupt image /data/x.png").warning("corrupt image /data/y.png");
  return s;
}
Scenario failedRun() {
  Scenario s;
  s.run.start().error("out of memory", 1).end("failed", 3);
  return s;
}
Scenario twoDevices() {
  Scenario s;
  s.ref.start().step(1, 10, 1000, 1, 1).step(1, 20, 2000, 2, 1);
  s.run.set("speedups.devices", 2).start().step(1, 10, 1200, 1, 1).step(1, 20, 2400, 2, 1);
  s.useRef = true;
  return s;
}
Scenario earlyStoppingNeverFired() {
  Scenario s;
  s.ref.set("train.epochs", 5).start().eval(1, 9, 0.85).end("ok", 10);
  s.run.set("train.epochs", 5).set("speedups.early_stopping.patience", 2).start().eval(1, 11, 0.85).end("ok", 13);
  s.useRef = true;
  return s;
}
Scenario largerGlobalBatch(double lr) {
  Scenario s;
  s.ref.set("optim.lr", 0.01).start().eval(1, 9, 0.85).end("ok", 10);
  s.run.set("speedups.devices", 2).set("optim.lr", lr).start().eval(1, 6, 0.82).end("ok", 7);
  s.useRef = true;
  return s;
}
Scenario largerGlobalBatchSameLr() { return largerGlobalBatch(0.01); }
Scenario largerGlobalBatchScaledLr() { return largerGlobalBatch(0.02); }
Scenario bf16Contended() {
  Scenario s = bf16SlowerAndLessAccurate();
  s.run.cpu(0.9);
  return s;
}
Scenario bf16ContendedReference() {
  Scenario s = bf16SlowerAndLessAccurate();
  s.ref.cpu(1.2);
  return s;
}
Scenario twoDevicesContendedReference() {
  Scenario s;
  s.ref.start().step(1, 10, 1000, 1, 1).step(1, 20, 2000, 2, 1).end("ok", 3);
  s.ref.cpu(0.5);
  s.run.set("speedups.devices", 2).start().step(1, 10, 1200, 1, 1).step(1, 20, 2400, 2, 1);
  s.useRef = true;
  return s;
}
Scenario oversubscribed() {
  Scenario s;
  s.run.set("speedups.devices", 2).start("cpu", 2).end("ok", 3);
  s.run.cpu(0.0, 2, 1.9, 4);
  return s;
}

Scenario twoDevicesLrScalingOn() {  // optim.lr_scaling=linear: the lr the trainer used is 2 × optim.lr
  Scenario s;
  s.ref.start().eval(1, 9, 0.85).end("ok", 10);
  s.run.set("speedups.devices", 2).set("optim.lr_scaling", "linear").start();
  s.run.events.back()["world_size"] = 2;
  s.run.eval(1, 6, 0.82).end("ok", 7);
  s.useRef = true;
  return s;
}
Scenario largerBatchPerRank() {  // twice the batch per rank on one device: no setting scales that
  Scenario s;
  s.ref.start().eval(1, 9, 0.85).end("ok", 10);
  s.run.set("train.batch_size", 128).start().eval(1, 6, 0.82).end("ok", 7);
  s.useRef = true;
  return s;
}

// A compute-bound lenet run whose summary says it reached `achieved` GFLOP/s; against a measured
// 95 GFLOP/s fp32 matmul peak unless `peak` is false; 3.0 ms compute-only against a 3.5 ms step
// unless told otherwise.
Scenario withFlops(double achieved, bool peak, double computeOnlyMs = 3.0, double stepMs = 3.5) {
  Scenario s = computeBound();
  s.run.set("model.name", "lenet").set("train.batch_size", 64);
  s.run.end("ok", 10);
  wb::proto::FlopsFigures f;
  f.per_step = 5.8e7;
  f.achieved_gflop_per_s = achieved;
  if (peak)
    f.peak = wb::proto::PeakFigure{95.0, "fp32 matmul measured on this CPU (2 threads), 2026-12-01"};
  else
    f.no_peak = "no peak measured on this machine: run `workbench-cli probe peak`";
  f.compute_only_step_ms = computeOnlyMs;
  f.step_ms = stepMs;
  s.run.measured(wb::proto::kFlopsKey, wb::proto::flopsJson(f));
  return s;
}
Scenario overheadBound() { return withFlops(1.9, true); }
// Forward + backward 80 % of the step split, yet fresh batches make the step 48 % slower than the
// same step on a batch already in memory: one verdict, the data path's, not "compute-bound".
Scenario freshBatchesCost() { return withFlops(57.0, true, 2.0, 3.85); }
Scenario nearPeak() { return withFlops(57.0, true); }
Scenario noPeakStored() { return withFlops(1.9, false); }

const std::map<QString, Builder>& scenarios() {
  static const std::map<QString, Builder> all = {
      {QStringLiteral("data-bound, workers 1 of 4 cores"), dataBoundFewWorkers},
      {QStringLiteral("data-bound, workers at max"), dataBoundMaxWorkers},
      {QStringLiteral("data-bound, workers 1, probe measured 2"), dataBoundProbedTwo},
      {QStringLiteral("data-bound, workers 4, probe measured 2"), dataBoundProbedTwoHasFour},
      {QStringLiteral("data-bound, probe: data path not the bottleneck"), dataBoundProbedNotBottleneck},
      {QStringLiteral("compute-bound fp32 on CPU"), computeBound},
      {QStringLiteral("fresh batches cost 48 %"), freshBatchesCost},
      {QStringLiteral("fp16 skips early"), fp16EarlySkips},
      {QStringLiteral("fp16 skips late"), fp16LateSkips},
      {QStringLiteral("zero1 halves peak memory"), shardingSaves},
      {QStringLiteral("zero1 saves 1 %"), shardingSavesNothing},
      {QStringLiteral("early-stopped after 3 of 10 epochs"), earlyStopped},
      {QStringLiteral("patience 2 in 1 epoch"), earlyStopCannotTrigger},
      {QStringLiteral("inference eval vs grad-enabled eval"), inferenceEval},
      {QStringLiteral("pin memory asked on CPU"), pinMemoryInactive},
      {QStringLiteral("bf16 slower and 2 pp less accurate"), bf16SlowerAndLessAccurate},
      {QStringLiteral("two corrupt images"), dataWarnings},
      {QStringLiteral("rank 1 out of memory"), failedRun},
      {QStringLiteral("2 CPU processes vs 1"), twoDevices},
      {QStringLiteral("patience set, never fired"), earlyStoppingNeverFired},
      {QStringLiteral("2 devices, lr unscaled"), largerGlobalBatchSameLr},
      {QStringLiteral("2 devices, lr scaled"), largerGlobalBatchScaledLr},
      {QStringLiteral("2 devices, optim.lr_scaling=linear"), twoDevicesLrScalingOn},
      {QStringLiteral("batch 128 per rank on 1 device"), largerBatchPerRank},
      {QStringLiteral("bf16 run contended"), bf16Contended},
      {QStringLiteral("bf16 reference contended"), bf16ContendedReference},
      {QStringLiteral("2 CPU processes, reference contended"), twoDevicesContendedReference},
      {QStringLiteral("4 threads on 2 cores"), oversubscribed},
      {QStringLiteral("lenet at 2 % of the peak"), overheadBound},
      {QStringLiteral("lenet at 60 % of the peak"), nearPeak},
      {QStringLiteral("no peak stored"), noPeakStored},
  };
  return all;
}

}  // namespace

class TestAdvisor : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void verdicts_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("contains");  // empty: the verdict must be absent
    auto row = [](const char* name, const char* scenario, const char* code, const char* contains) {
      QTest::newRow(name) << QString::fromUtf8(scenario) << QString::fromUtf8(code) << QString::fromUtf8(contains);
    };
    row("data-bound, workers 1 of 4 cores", "data-bound, workers 1 of 4 cores", "data-bound",
        "Data-bound: 61 % of each step waits for data — raise loader workers from 1 to 4 (the rule of thumb "
        "min(cores, 4), not measured: `workbench-cli probe workers` measures the best count");
    row("data-bound, workers at max", "data-bound, workers at max", "data-bound",
        "already has 4 workers: make decoding cheaper (smaller images, lighter augmentation) or the storage faster "
        "(`workbench-cli probe workers` measures whether more would help)");
    row("data-bound, the probe's count", "data-bound, workers 1, probe measured 2", "data-bound",
        "raise loader workers from 1 to 2 (the worker probe of 2026-12-01 08:40 UTC measured 2 workers as the best "
        "count for this experiment on this machine)");
    row("data-bound, more workers than the probe's best", "data-bound, workers 4, probe measured 2", "data-bound",
        "the loader already has 4 workers, and the worker probe of 2026-12-01 08:40 UTC found no gain beyond 2 workers");
    row("data-bound, the probe found loading is no bottleneck", "data-bound, probe: data path not the bottleneck",
        "data-bound",
        "yet the worker probe of 2026-12-01 08:40 UTC found the data path is not the bottleneck for this experiment "
        "on this machine (it recommends 0 workers)");
    row("compute-bound is not data-bound", "compute-bound fp32 on CPU", "data-bound", "");
    row("compute-bound fp32 on CPU", "compute-bound fp32 on CPU", "compute-bound", "forward + backward take 80 %");
    row("fp16 early skips", "fp16 skips early", "fp16-skips", "fp16 skipped 14 early steps (normal); the scale settled at 8192");
    row("fp16 late skips", "fp16 skips late", "fp16-skips", "still at step 900 of 1000");
    row("sharding saving vs cost", "zero1 halves peak memory", "sharding", "saved 47 % peak host memory at 6 % step-time cost");
    row("sharding saves nothing", "zero1 saves 1 %", "sharding", "too small here to pay");
    row("early stop savings", "early-stopped after 3 of 10 epochs", "early-stop",
        "after epoch 3 of 10 (best epoch 1): saved about 70.0 s, 70 %");
    row("early stop cannot trigger", "patience 2 in 1 epoch", "early-stop", "cannot trigger in 1 epoch(s)");
    row("inference eval savings", "inference eval vs grad-enabled eval", "inference-eval",
        "took 200 ms per evaluation vs 400 ms (50 % less)");
    row("requested but inactive", "pin memory asked on CPU", "inactive-pin_memory", "needs CUDA");
    // One run each: no interval, so no "slower" from a single pair (the machine's noise is larger).
    row("one change, one run each: within noise", "bf16 slower and 2 pp less accurate", "within-noise",
        "Changing precision: 0.83× (1 run each: no interval) — within this machine's run-to-run noise");
    row("accuracy cost", "bf16 slower and 2 pp less accurate", "accuracy", "2.00 pp below the reference");
    row("data warnings", "two corrupt images", "warnings", "corrupt image /data/x.png");
    row("failed run", "rank 1 out of memory", "status", "The run failed: rank 1: out of memory");
    row("early stopping that never fired is not blamed", "patience set, never fired", "slower", "");
    row("accuracy cost of a larger global batch", "2 devices, lr unscaled", "accuracy",
        "the global batch is 2× the reference's (128 vs 64), so the same epochs are 2× fewer optimiser steps — "
        "set optim.lr_scaling=linear");
    row("accuracy cost with the lr already scaled", "2 devices, lr scaled", "accuracy",
        "the lr is already scaled by 2, so train more epochs");
    row("accuracy cost with optim.lr_scaling on", "2 devices, optim.lr_scaling=linear", "accuracy",
        "the lr is already scaled by 2, so train more epochs");
    row("a larger batch per rank: scale optim.lr", "batch 128 per rank on 1 device", "accuracy",
        "scale optim.lr by 2 (linear scaling rule)");
    row("devices scaling", "2 CPU processes vs 1", "scaling",
        "2 CPU processes gave 1.20× train samples/s over 1 (60 % scaling efficiency)");
    row("contended run: not trustworthy", "bf16 run contended", "contended",
        "Measured under contention: another process used 0.9 of 2 cores");
    row("contended run: no slower verdict", "bf16 run contended", "slower", "");
    row("contended reference: not trustworthy", "bf16 reference contended", "contended-reference",
        "another process used 1.2 of 2 cores");
    row("contended reference: no scaling verdict", "2 CPU processes, reference contended", "scaling", "");
    row("oversubscribed cores", "4 threads on 2 cores", "oversubscribed", "asked for 4 threads on 2 cores");
    row("overhead-bound", "lenet at 2 % of the peak", "overhead-bound",
        "lenet at batch 64 reaches 2.0 % of this CPU's fp32 matmul peak (1.90 of 95.0 GFLOP/s): the step is bound by "
        "per-operation overhead, not arithmetic; a larger batch");
    row("overhead-bound: the data path's cost", "lenet at 2 % of the peak", "overhead-bound",
        "The data path costs 14 % of each step (the same step on a batch already in memory: 3.00 ms against 3.50 ms)");
    row("overhead-bound: precision is not the lever", "lenet at 2 % of the peak", "compute-bound", "");
    row("near the peak", "lenet at 60 % of the peak", "near-peak", "reaches 60 % of this CPU's fp32 matmul peak");
    row("near the peak is still compute-bound", "lenet at 60 % of the peak", "compute-bound", "forward + backward");
    row("a costly data path is not compute-bound", "fresh batches cost 48 %", "compute-bound", "");
    row("a costly data path says what it measures", "fresh batches cost 48 %", "near-peak",
        "The data path costs 48 % of each step (the same step on a batch already in memory: 2.00 ms against 3.85 ms); "
        "the loader's wait is only");
    row("no peak: how to measure one", "no peak stored", "no-peak",
        "Achieved 1.90 GFLOP/s; no peak measured on this machine: run `workbench-cli probe peak` to see how far");
  }
  void verdicts() {
    QFETCH(QString, scenario);
    QFETCH(QString, code);
    QFETCH(QString, contains);
    const auto it = scenarios().find(scenario);
    QVERIFY2(it != scenarios().end(), qPrintable(QStringLiteral("no scenario \"%1\"").arg(scenario)));
    const Scenario s = it->second();
    const RunRecord r = s.run.record("run"), rr = s.ref.record("ref");
    const RunMetrics m = computeMetrics(r, std::nullopt), rm = computeMetrics(rr, std::nullopt);
    const WorkersAdvice* workers = s.workers ? &*s.workers : nullptr;
    auto verdicts = s.useRef ? advise(r, m, &rr, &rm, workers) : advise(r, m, nullptr, nullptr, workers);
    const Advice* v = fixture::findAdvice(verdicts, code.toStdString());
    QString all;
    for (const auto& x : verdicts) all += QString::fromStdString(x.code + ": " + x.text) + QLatin1Char('\n');
    if (contains.isEmpty()) {
      QVERIFY2(!v, qPrintable(all));
      return;
    }
    QVERIFY2(v, qPrintable(QStringLiteral("no ") + code + QStringLiteral(" in:\n") + all));
    QVERIFY2(QString::fromStdString(v->text).contains(contains), qPrintable(QString::fromStdString(v->text)));
  }

  // A verdict that names a command to run carries it as its action, with what it does in words
  // (the window's button); one that names none has none.
  void aCommandToRunIsTheVerdictsAction_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("action");
    QTest::addColumn<QString>("label");
    QTest::newRow("no peak stored") << QStringLiteral("no peak stored") << QStringLiteral("no-peak") << QStringLiteral("probe peak")
                                    << QStringLiteral("Measure this machine's peak");
    QTest::newRow("data-bound, not probed") << QStringLiteral("data-bound, workers 1 of 4 cores") << QStringLiteral("data-bound")
                                            << QStringLiteral("probe workers") << QStringLiteral("Measure the best loader workers");
    QTest::newRow("data-bound, probed") << QStringLiteral("data-bound, workers 1, probe measured 2") << QStringLiteral("data-bound")
                                        << QString() << QString();
  }
  void aCommandToRunIsTheVerdictsAction() {
    QFETCH(QString, scenario);
    QFETCH(QString, code);
    QFETCH(QString, action);
    QFETCH(QString, label);
    const Scenario s = scenarios().at(scenario)();
    const RunRecord r = s.run.record("run"), rr = s.ref.record("ref");
    const RunMetrics m = computeMetrics(r, std::nullopt), rm = computeMetrics(rr, std::nullopt);
    const WorkersAdvice* workers = s.workers ? &*s.workers : nullptr;
    const auto verdicts = s.useRef ? advise(r, m, &rr, &rm, workers) : advise(r, m, nullptr, nullptr, workers);
    const Advice* v = fixture::findAdvice(verdicts, code.toStdString());
    QVERIFY(v);
    const auto a = wb::advice::actionOf(*v);
    QCOMPARE(a ? QString::fromStdString(a->args) : QString(), action);
    QCOMPARE(a ? QString::fromStdString(a->label) : QString(), label);
  }

  // A NaN is written as null; any event field may be null or mistyped: the advisor shrugs.
  void nullEventFieldsDoNotThrow() {
    FakeRun run;
    run.set("speedups.early_stopping.patience", 2);
    run.start("cpu", 4);
    run.events.back()["speedups"] = json{{"workers", {{"requested", 2}, {"active", nullptr}, {"note", nullptr}}},
                                         {"pin_memory", {{"requested", true}, {"active", false}, {"note", 3}}},
                                         {"early_stopping", {{"requested", {{"patience", nullptr}}}}},
                                         {"sharding", "on"}};
    run.step(1, 10, 640, 1, 1.0).step(1, 20, 1280, 2, 0.9).earlyStop(1).end("early-stopped", 5);
    run.events[run.events.size() - 2]["best_epoch"] = nullptr;
    RunRecord r = run.record();
    std::vector<Advice> vs;
    try {
      vs = advise(r, computeMetrics(r, std::nullopt));
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    const Advice* inactive = fixture::findAdvice(vs, "inactive-pin_memory");
    QVERIFY(inactive);
    QVERIFY2(inactive->text.find("no reason given") != std::string::npos, inactive->text.c_str());
  }

  // The advisor speaks of a speed effect only when the measured interval clears the noise.
  void speedAdviceFollowsTheVerdict_data() {
    QTest::addColumn<double>("point");
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("absent");
    QTest::newRow("clearly slower") << 0.70 << 0.62 << 0.79 << QStringLiteral("slower") << QStringLiteral("within-noise");
    QTest::newRow("clearly faster") << 1.60 << 1.30 << 1.90 << QStringLiteral("faster") << QStringLiteral("slower");
    QTest::newRow("within noise") << 0.80 << 0.60 << 1.05 << QStringLiteral("within-noise") << QStringLiteral("slower");
  }
  void speedAdviceFollowsTheVerdict() {
    QFETCH(double, point);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(QString, code);
    QFETCH(QString, absent);
    const Scenario s = bf16SlowerAndLessAccurate();
    const RunRecord r = s.run.record("run"), rr = s.ref.record("ref");
    const RunMetrics m = computeMetrics(r, std::nullopt), rm = computeMetrics(rr, std::nullopt);
    SpeedupEstimate e;
    e.point = point, e.lo = lo, e.hi = hi, e.noise_band = 0.14, e.pairs = 5;
    e.verdict = verdictOf(point, lo, hi, kDefaultMinEffect);
    const auto advice = advise(r, m, &rr, &rm, nullptr, &e);
    QString all;
    for (const auto& x : advice) all += QString::fromStdString(x.code + ": " + x.text) + QLatin1Char('\n');
    QVERIFY2(fixture::findAdvice(advice, code.toStdString()), qPrintable(all));
    QVERIFY2(!fixture::findAdvice(advice, absent.toStdString()), qPrintable(all));
    QVERIFY2(all.contains(QString::fromStdString(formatEstimate(e))), qPrintable(all));  // with its interval
  }

  void quietRunHasNoTips() {
    // Balanced split, finished fine, no speedups asked: nothing to act on.
    FakeRun run = withSplit({1.0, 0, 2.5, 2.5, 1.0, 0}, 2, 4);
    run.end("ok", 5);
    const RunRecord r = run.record();
    auto vs = advise(r, computeMetrics(r, std::nullopt));
    for (const auto& v : vs) QVERIFY2(v.severity != Severity::Warning && v.severity != Severity::Tip, v.text.c_str());
  }

  // One rule for "which worker count": the probe's when stored, else min(cores, 4); the ladder
  // reads the same from the capabilities document it is attached to.
  void workersAdviceIsTheProbeElseMinCoresFour() {
    QCOMPARE(ruleOfThumbAdvice(2).workers, 2);
    QCOMPARE(ruleOfThumbAdvice(16).workers, 4);
    QCOMPARE(ruleOfThumbAdvice(0).workers, 1);
    QVERIFY(!ruleOfThumbAdvice(2).measured);
    QCOMPARE(QString::fromStdString(ruleOfThumbAdvice(8).source()), QStringLiteral("the rule of thumb min(cores, 4)"));
    QCOMPARE(workersAdvice(json{{"cores", 16}}).workers, 4);

    const WorkersAdvice a = probed(2, false);
    json caps = {{"cores", 16}};
    attachWorkersAdvice(caps, a);
    const WorkersAdvice fromCaps = workersAdvice(caps);
    QCOMPARE(fromCaps.workers, a.workers);
    QCOMPARE(fromCaps.measured, a.measured);
    QCOMPARE(fromCaps.date, a.date);
    QCOMPARE(fromCaps.source(), a.source());
    QCOMPARE(QString::fromStdString(a.source()), QStringLiteral("the worker probe of 2026-12-01 08:40 UTC"));
    json caps0 = {{"cores", 4}};
    attachWorkersAdvice(caps0, probed(0, true));
    QCOMPARE(workersAdvice(caps0).workers, 0);
    QVERIFY(workersAdvice(caps0).data_not_bottleneck);
    json none = {{"cores", 4}};
    attachWorkersAdvice(none, ruleOfThumbAdvice(4));  // nothing measured: nothing attached
    QVERIFY(!none.contains("speedups"));
  }
};

QTEST_APPLESS_MAIN(TestAdvisor)
#include "test_advisor.moc"
