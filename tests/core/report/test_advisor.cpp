// Advisor verdicts: each row builds a run (and maybe a reference) whose events call for one
// verdict, and checks its code and the numbers in its sentence.
#include <QtTest/QtTest>

#include "report_fixture.h"
#include "wb/report/advisor.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::report;

namespace {

// Runs with three step events (the first is warm-up and ignored) with the split `ms`.
FakeRun withSplit(std::vector<double> ms, int workers, int cores) {
  FakeRun r;
  r.set("speedups.workers", workers);
  r.start("cpu", cores);
  r.step(1, 10, 640, 1, 1.0, {50, 0, 1, 1, 1, 0});  // warm-up: would look data-bound
  r.step(1, 20, 1280, 2, 0.9, ms).step(1, 30, 1920, 3, 0.8, ms);
  return r;
}

const Verdict* find(const std::vector<Verdict>& vs, const std::string& code) {
  for (const auto& v : vs)
    if (v.code == code) return &v;
  return nullptr;
}

}  // namespace

class TestAdvisor : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void verdicts_data() {
    QTest::addColumn<int>("scenario");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("contains");  // empty: the verdict must be absent
    QTest::newRow("data-bound, workers 1 of 4 cores") << 0 << "data-bound" << "Data-bound: 61 % of each step waits for data — raise loader workers from 1 to 4";
    QTest::newRow("data-bound, workers at max") << 1 << "data-bound" << "already has 4 workers";
    QTest::newRow("compute-bound is not data-bound") << 2 << "data-bound" << "";
    QTest::newRow("compute-bound fp32 on CPU") << 2 << "compute-bound" << "forward + backward take 80 %";
    QTest::newRow("fp16 early skips") << 3 << "fp16-skips" << "fp16 skipped 14 early steps (normal); the scale settled at 8192";
    QTest::newRow("fp16 late skips") << 4 << "fp16-skips" << "still at step 900 of 1000";
    QTest::newRow("sharding saving vs cost") << 5 << "sharding" << "saved 47 % peak host memory at 6 % step-time cost";
    QTest::newRow("sharding saves nothing") << 6 << "sharding" << "too small here to pay";
    QTest::newRow("early stop savings") << 7 << "early-stop" << "after epoch 3 of 10 (best epoch 1): saved about 70.0 s, 70 %";
    QTest::newRow("early stop cannot trigger") << 8 << "early-stop" << "cannot trigger in 1 epoch(s)";
    QTest::newRow("inference eval savings") << 9 << "inference-eval" << "took 200 ms per evaluation vs 400 ms (50 % less)";
    QTest::newRow("requested but inactive") << 10 << "inactive-pin_memory" << "needs CUDA";
    QTest::newRow("one change made it slower") << 11 << "slower" << "Changing precision made this run 20 % slower";
    QTest::newRow("accuracy cost") << 11 << "accuracy" << "2.00 pp below the reference";
    QTest::newRow("data warnings") << 12 << "warnings" << "corrupt image /data/x.png";
    QTest::newRow("failed run") << 13 << "status" << "The run failed: rank 1: out of memory";
    QTest::newRow("early stopping that never fired is not blamed") << 15 << "slower" << "";
    QTest::newRow("accuracy cost of a larger global batch") << 16 << "accuracy"
                                                            << "the global batch is 2× the reference's (128 vs 64), so the same epochs are 2× "
                                                               "fewer optimiser steps — set optim.lr_scaling=linear";
    QTest::newRow("accuracy cost with the lr already scaled") << 17 << "accuracy"
                                                              << "the lr is already scaled by 2, so train more epochs";
    QTest::newRow("accuracy cost with optim.lr_scaling on") << 22 << "accuracy"
                                                            << "the lr is already scaled by 2, so train more epochs";
    QTest::newRow("a larger batch per rank: scale optim.lr") << 23 << "accuracy" << "scale optim.lr by 2 (linear scaling rule)";
    QTest::newRow("devices scaling") << 14 << "scaling" << "2 CPU processes gave 1.20× train samples/s over 1 (60 % scaling efficiency)";
    QTest::newRow("contended run: not trustworthy") << 18 << "contended" << "Measured under contention: another process used 0.9 of 2 cores";
    QTest::newRow("contended run: no slower verdict") << 18 << "slower" << "";
    QTest::newRow("contended reference: not trustworthy") << 19 << "contended-reference" << "another process used 1.2 of 2 cores";
    QTest::newRow("contended reference: no scaling verdict") << 20 << "scaling" << "";
    QTest::newRow("oversubscribed cores") << 21 << "oversubscribed" << "asked for 4 threads on 2 cores";
  }
  void verdicts() {
    QFETCH(int, scenario);
    QFETCH(QString, code);
    QFETCH(QString, contains);
    FakeRun run, ref;
    bool useRef = false;
    switch (scenario) {
      case 0: run = withSplit({6.1, 0, 1.5, 2.0, 0.4, 0}, 1, 4); break;
      case 1: run = withSplit({6.1, 0, 1.5, 2.0, 0.4, 0}, 4, 8); break;
      case 2: run = withSplit({0.5, 0, 3.0, 5.0, 1.5, 0}, 0, 4); break;
      case 3:
      case 4: {
        run.set("speedups.precision", "16-mixed").start("cuda:0");
        const int64_t growthAt = scenario == 3 ? 50 : 900;
        run.step(1, 10, 640, 1, 1).amp(65536, 10).step(1, growthAt, 6400, 2, 1).amp(8192, 14);
        run.step(2, 1000, 64000, 3, 1).amp(8192, 14);
        break;
      }
      case 5:
      case 6: {
        const double ratio = scenario == 5 ? 0.53 : 0.99;
        ref.set("speedups.devices", 2).start();
        ref.step(1, 10, 640, 1, 1, {1, 0, 4, 4, 1, 0}, 1000 << 20).step(1, 20, 1280, 2, 1, {1, 0, 4, 4, 1, 0}, 1000 << 20);
        run.set("speedups.devices", 2).set("speedups.sharding", "zero1").start();
        const int64_t peak = static_cast<int64_t>((1000 << 20) * ratio);
        run.step(1, 10, 640, 1, 1, {1, 0, 4, 4, 1.6, 0}, peak).step(1, 20, 1280, 2, 1, {1, 0, 4, 4, 1.6, 0}, peak);
        useRef = true;
        break;
      }
      case 7:
        run.set("train.epochs", 10).set("speedups.early_stopping.patience", 2).start();
        for (int e = 1; e <= 3; ++e) run.epoch(e, 10.0 * e, 10.0);
        run.earlyStop(1).end("early-stopped", 31);
        break;
      case 8:
        run.set("train.epochs", 1).set("speedups.early_stopping.patience", 2).start().epoch(1, 10, 10).end("ok", 11);
        break;
      case 9:
        ref.set("speedups.inference_eval", false).start().eval(1, 10, 0.8, 400);
        run.set("speedups.inference_eval", true).start().eval(1, 9, 0.8, 200);
        useRef = true;
        break;
      case 10:
        run.set("speedups.pin_memory", true)
            .start("cpu", 2, {{"pin_memory", {{"requested", true}, {"active", false}, {"note", "needs CUDA; not available"}}},
                              {"workers", {{"requested", 0}, {"active", false}, {"note", ""}}}});
        break;
      case 11:
        ref.start().eval(1, 9, 0.85).end("ok", 10);
        run.set("speedups.precision", "bf16-mixed").start().eval(1, 11, 0.83).end("ok", 12);
        useRef = true;
        break;
      case 12: run.start().warning("corrupt image /data/x.png").warning("corrupt image /data/y.png"); break;
      case 13: {
        run.start();
        json err = wb::proto::makeEvent("error", 1, 3.0);
        err["message"] = "out of memory";
        run.events.push_back(err);
        run.end("failed", 3);
        break;
      }
      case 15:
        ref.set("train.epochs", 5).start().eval(1, 9, 0.85).end("ok", 10);
        run.set("train.epochs", 5).set("speedups.early_stopping.patience", 2).start().eval(1, 11, 0.85).end("ok", 13);
        useRef = true;
        break;
      case 16:
        ref.start().eval(1, 9, 0.85).end("ok", 10);
        run.set("speedups.devices", 2).start().eval(1, 6, 0.82).end("ok", 7);
        useRef = true;
        break;
      case 17:
        ref.set("optim.lr", 0.01).start().eval(1, 9, 0.85).end("ok", 10);
        run.set("speedups.devices", 2).set("optim.lr", 0.02).start().eval(1, 6, 0.82).end("ok", 7);
        useRef = true;
        break;
      case 18:  // scenario 11 (precision made it slower), measured beside another load
      case 19:
        ref.start().eval(1, 9, 0.85).end("ok", 10);
        run.set("speedups.precision", "bf16-mixed").start().eval(1, 11, 0.83).end("ok", 12);
        if (scenario == 18) run.cpu(0.9);
        else ref.cpu(1.2);
        useRef = true;
        break;
      case 20:  // scenario 14 with a contended reference
        ref.start().step(1, 10, 1000, 1, 1).step(1, 20, 2000, 2, 1).end("ok", 3);
        ref.cpu(0.5);
        run.set("speedups.devices", 2).start().step(1, 10, 1200, 1, 1).step(1, 20, 2400, 2, 1);
        useRef = true;
        break;
      case 22:  // two ranks with optim.lr_scaling=linear: the lr the trainer used is 2 × optim.lr
        ref.start().eval(1, 9, 0.85).end("ok", 10);
        run.set("speedups.devices", 2).set("optim.lr_scaling", "linear").start();
        run.events.back()["world_size"] = 2;
        run.eval(1, 6, 0.82).end("ok", 7);
        useRef = true;
        break;
      case 23:  // twice the batch per rank on one device: no setting scales that
        ref.start().eval(1, 9, 0.85).end("ok", 10);
        run.set("train.batch_size", 128).start().eval(1, 6, 0.82).end("ok", 7);
        useRef = true;
        break;
      case 21:
        run.set("speedups.devices", 2).start("cpu", 2).end("ok", 3);
        run.cpu(0.0, 2, 1.9, 4);
        break;
      case 14:
        ref.start().step(1, 10, 1000, 1, 1).step(1, 20, 2000, 2, 1);
        run.set("speedups.devices", 2).start().step(1, 10, 1200, 1, 1).step(1, 20, 2400, 2, 1);
        useRef = true;
        break;
    }
    const RunRecord r = run.record("run"), rr = ref.record("ref");
    const RunMetrics m = computeMetrics(r, std::nullopt), rm = computeMetrics(rr, std::nullopt);
    auto verdicts = useRef ? advise(r, m, &rr, &rm) : advise(r, m);
    const Verdict* v = find(verdicts, code.toStdString());
    QString all;
    for (const auto& x : verdicts) all += QString::fromStdString(x.code + ": " + x.text) + QLatin1Char('\n');
    if (contains.isEmpty()) {
      QVERIFY2(!v, qPrintable(all));
      return;
    }
    QVERIFY2(v, qPrintable(QStringLiteral("no ") + code + QStringLiteral(" in:\n") + all));
    QVERIFY2(QString::fromStdString(v->text).contains(contains), qPrintable(QString::fromStdString(v->text)));
  }

  // A NaN is written as null; any event field may be null or mistyped: the advisor shrugs.
  void nullEventFieldsDoNotThrow() {
    FakeRun run;
    run.set("speedups.early_stopping.patience", 2);
    run.start("cpu", 4, json{{"workers", {{"requested", 2}, {"active", nullptr}, {"note", nullptr}}},
                             {"pin_memory", {{"requested", true}, {"active", false}, {"note", 3}}},
                             {"early_stopping", {{"requested", {{"patience", nullptr}}}}}});
    run.step(1, 10, 640, 1, 1.0).step(1, 20, 1280, 2, 0.9).earlyStop(1).end("early-stopped", 5);
    run.events[run.events.size() - 2]["best_epoch"] = nullptr;
    RunRecord r = run.record();
    std::vector<Verdict> vs;
    try {
      vs = advise(r, computeMetrics(r, std::nullopt));
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    const Verdict* inactive = find(vs, "inactive-pin_memory");
    QVERIFY(inactive);
    QVERIFY2(inactive->text.find("no reason given") != std::string::npos, inactive->text.c_str());
  }

  void quietRunHasNoTips() {
    // Balanced split, finished fine, no speedups asked: nothing to act on.
    FakeRun run = withSplit({1.0, 0, 2.5, 2.5, 1.0, 0}, 2, 4);
    run.end("ok", 5);
    const RunRecord r = run.record();
    auto vs = advise(r, computeMetrics(r, std::nullopt));
    for (const auto& v : vs) QVERIFY2(v.severity != Severity::Warning && v.severity != Severity::Tip, v.text.c_str());
  }

  void recommendedWorkersIsMinCoresFour() {
    QCOMPARE(recommendedWorkers(2), 2);
    QCOMPARE(recommendedWorkers(16), 4);
    QCOMPARE(recommendedWorkers(0), 1);
  }
};

QTEST_APPLESS_MAIN(TestAdvisor)
#include "test_advisor.moc"
