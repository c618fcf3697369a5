// End to end: `workbench-cli probe segments` on a tiny real experiment (Fashion-MNIST, real lenet
// steps): the baseline and the variant alternate in one process, every round times each once, the
// estimate rests on the rounds' own noise and says how it was made; a field that cannot change in
// one process is refused naming it and what to use instead.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

wb::test::ProcResult runCli(const QStringList& args) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 300000, QProcessEnvironment::systemEnvironment());
}

const QStringList kTiny = {QStringLiteral("--set"), QStringLiteral("data.limit_train=512"), QStringLiteral("--set"),
                           QStringLiteral("train.batch_size=32")};

}  // namespace

class TestCliProbeSegments : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void alternatesInOneProcess() {
    WB_NEED(wb::test::missingFashionMnist());
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                      QStringLiteral("speedups.precision=bf16-mixed"), QStringLiteral("--steps"),
                                      QStringLiteral("3"), QStringLiteral("--min-rounds"), QStringLiteral("2"),
                                      QStringLiteral("--max-rounds"), QStringLiteral("3"), QStringLiteral("--json")} +
                          kTiny);
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object(), r.out.constData());
    const int rounds = doc["rounds"].get<int>();
    QVERIFY2(rounds >= 2 && rounds <= 3, r.err.constData());
    QCOMPARE(int(doc["baseline_rates"].size()), rounds);
    QCOMPARE(int(doc["variant_rates"].size()), rounds);
    for (const char* side : {"baseline_rates", "variant_rates"})
      for (const auto& v : doc[side]) QVERIFY(v.get<double>() > 0);
    QCOMPARE(doc["noise"]["df"].get<int>(), rounds - 1);  // two arms: (2 − 1)(R − 1)
    QVERIFY(doc["estimate"]["point"].is_number());
    QVERIFY(doc["estimate"]["lo"].is_number() && doc["estimate"]["hi"].is_number());
    QVERIFY2(doc["estimate"]["method"].get<std::string>().find("interleaved segments in one process") != std::string::npos,
             doc.dump().c_str());
    QVERIFY2(doc["changed"].get<std::string>().find("Precision 32-true → bf16-mixed") != std::string::npos, doc.dump().c_str());
    // The point is the rounds' median ratio: between the smallest and the largest round's.
    double lo = 1e9, hi = 0;
    for (int i = 0; i < rounds; ++i) {
      const double ratio = doc["variant_rates"][i].get<double>() / doc["baseline_rates"][i].get<double>();
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
    }
    const double point = doc["estimate"]["point"].get<double>();
    QVERIFY(point >= lo - 1e-9 && point <= hi + 1e-9);
  }

  // Channels-last and the multi-tensor step switch within the process too: the weights change
  // layout between the arms' segments and each arm steps with its own optimiser.
  void switchesTheLayoutAndTheOptimiserStep() {
    WB_NEED(wb::test::missingFashionMnist());
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                      QStringLiteral("speedups.channels_last=true"), QStringLiteral("--vary"),
                                      QStringLiteral("speedups.fused_optimizer=true"), QStringLiteral("--steps"),
                                      QStringLiteral("3"), QStringLiteral("--min-rounds"), QStringLiteral("2"),
                                      QStringLiteral("--max-rounds"), QStringLiteral("2"), QStringLiteral("--json")} +
                          kTiny);
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object() && doc["rounds"].get<int>() == 2, r.out.constData());
    for (const char* field : {"Channels-last off → on", "Multi-tensor optimiser step off → on"})  // labels, not keys
      QVERIFY2(doc["changed"].get<std::string>().find(field) != std::string::npos, doc.dump().c_str());
    for (const char* side : {"baseline_rates", "variant_rates"})
      for (const auto& v : doc[side]) QVERIFY(v.get<double>() > 0);
  }

  // --math-check: the same process first checks whether the change keeps the math and writes that
  // record before its first round (a try by parts asks both of one process).
  void checksTheMathFirstInTheSameProcess() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir tmp;
    const QString mathFile = tmp.filePath(QStringLiteral("math.json"));
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                      QStringLiteral("speedups.fused_optimizer=true"), QStringLiteral("--math-check"),
                                      mathFile, QStringLiteral("--only-faster"), QStringLiteral("--steps"),
                                      QStringLiteral("3"), QStringLiteral("--min-rounds"), QStringLiteral("2"),
                                      QStringLiteral("--max-rounds"), QStringLiteral("2"), QStringLiteral("--json")} +
                          kTiny);
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object() && doc["rounds"].get<int>() == 2, r.out.constData());
    QFile f(mathFile);
    QVERIFY2(f.open(QIODevice::ReadOnly), "the math check's record is written");
    const json math = json::parse(f.readAll().toStdString(), nullptr, false);
    QVERIFY2(math.value("kind", "") == "math-check" && math.value("checked", false) && math.value("keeps_math", false),
             math.dump().c_str());
    QVERIFY2(math.value("train_samples", 0) == 512, math.dump().c_str());
    const int checked = r.err.indexOf("the math check: variant"), round = r.err.indexOf("round 1");
    QVERIFY2(checked >= 0 && round > checked, r.err.constData());
  }

  // Without --steps a segment is sized from the warm-up's step time: as many steps as make
  // --min-segment-s on the faster arm; a longer minimum gives longer segments.
  void segmentsAreSizedFromTheStepTime() {
    WB_NEED(wb::test::missingFashionMnist());
    auto sized = [](const QString& minSeconds) {
      const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                        QStringLiteral("train.batch_size=64"), QStringLiteral("--min-segment-s"), minSeconds,
                                        QStringLiteral("--min-rounds"), QStringLiteral("2"), QStringLiteral("--max-rounds"),
                                        QStringLiteral("2"), QStringLiteral("--json")} +
                            kTiny);
      if (r.rc != 0) QTest::qFail(r.err.constData(), __FILE__, __LINE__);
      return json::parse(r.out.toStdString(), nullptr, false);
    };
    const json shortSegments = sized(QStringLiteral("0.05")), longSegments = sized(QStringLiteral("0.6"));
    QVERIFY(shortSegments.value("steps_sized", false) && longSegments.value("steps_sized", false));
    QVERIFY(shortSegments["steps_per_segment"].get<int>() >= 3);
    QVERIFY2(longSegments["steps_per_segment"].get<int>() > shortSegments["steps_per_segment"].get<int>(),
             (shortSegments.dump() + "\n" + longSegments.dump()).c_str());
  }

  // With --only-faster an evaluation lever's rounds stop once it can no longer make the time to
  // target faster: evaluating 8 images an epoch against training on 512 is about 0.6 % of the run,
  // so no evaluation speedup could (it needs 1.96 % for 2 %), and the least rounds are all that run
  // however noisy they are (a contended round's wide interval does not keep them going).
  void anEvaluationThatCannotMoveTheRunStopsEarly() {
    WB_NEED(wb::test::missingFashionMnist());
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--evaluation"),
                                      QStringLiteral("--vary"), QStringLiteral("speedups.inference_eval=false"),
                                      QStringLiteral("--only-faster"), QStringLiteral("--set"), QStringLiteral("data.limit_val=8"),
                                      QStringLiteral("--json")} +
                          kTiny);
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.value("rounds", 0) <= 3, doc.dump().c_str());  // the least rounds (kSegmentMinRounds)
    const bool clear = doc["estimate"].value("verdict", "") != "within noise";
    QVERIFY2(clear || doc.value("cannot_be_faster", false), doc.dump().c_str());
    if (!clear)
      QVERIFY2(r.err.contains("can no longer make the time to target faster") && r.err.contains("% of a run's time"), r.err.constData());
  }

  // --evaluation-after: a training lever that acts in the evaluation too (loader workers) gets its
  // evaluations timed after the training's rounds, in the same process, in the fewest rounds.
  void timesTheEvaluationsAfterTheTraining() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("evaluation.json"));
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                      QStringLiteral("speedups.workers=1"), QStringLiteral("--steps"), QStringLiteral("3"),
                                      QStringLiteral("--min-rounds"), QStringLiteral("2"), QStringLiteral("--max-rounds"),
                                      QStringLiteral("4"), QStringLiteral("--evaluation-after"), file, QStringLiteral("--set"),
                                      QStringLiteral("data.limit_val=64"), QStringLiteral("--json")} +
                          kTiny);
    QVERIFY2(r.rc == 0, r.err.constData());
    const json training = json::parse(r.out.toStdString(), nullptr, false);
    QCOMPARE(training.value("kind", std::string()), std::string("segments"));
    QFile f(file);
    QVERIFY2(f.open(QIODevice::ReadOnly), "the evaluations' record was not written");
    const json ev = json::parse(f.readAll().toStdString(), nullptr, false);
    QCOMPARE(ev.value("kind", std::string()), std::string("evaluation segments"));
    QVERIFY2(ev["rounds"].get<int>() >= 1 && ev["rounds"].get<int>() <= 2, ev.dump().c_str());  // --min-rounds
    QCOMPARE(ev["baseline_eval_s"].size(), ev["baseline_rates"].size());
    QVERIFY2(r.err.contains("the evaluations too"), r.err.constData());
    // Not both: evaluation segments cannot time the evaluations again.
    const auto both = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--evaluation"),
                                         QStringLiteral("--vary"), QStringLiteral("speedups.workers=1"),
                                         QStringLiteral("--evaluation-after"), file} +
                             kTiny);
    QCOMPARE(both.rc, 2);
    QVERIFY2(both.err.contains("--evaluation-after") && both.err.contains("leave out --evaluation"), both.err.constData());
  }

  void refusesWhatCannotChangeInOneProcess() {
    const auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                      QStringLiteral("model.name=mnist-cnn")} +
                          kTiny);
    QCOMPARE(r.rc, 2);
    QVERIFY2(r.err.contains("model.name differs") && r.err.contains("workbench-cli try"), r.err.constData());
    // An evaluation lever is timed by evaluations (--evaluation), and the refusal says so.
    const auto eval = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments"), QStringLiteral("--vary"),
                                         QStringLiteral("train.eval_batch_size=16")} +
                             kTiny);
    QCOMPARE(eval.rc, 2);
    QVERIFY2(eval.err.contains("train.eval_batch_size differs") && eval.err.contains("--evaluation"), eval.err.constData());
    const auto none = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("segments")});
    QCOMPARE(none.rc, 2);
    QVERIFY2(none.err.contains("--vary"), none.err.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliProbeSegments)
#include "test_cli_probe_segments.moc"
