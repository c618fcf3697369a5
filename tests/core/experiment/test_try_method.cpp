// Which method measures a try when none is asked for (wb/experiment/try_method.h): the cheaper for
// the same precision. A change that keeps the math goes by parts; one that changes it goes in whole
// runs while the experiment has no reference runs (they and the runs to the target cost more than
// as many pairs), by parts once it has them, unless the run is so short that by parts' fixed part
// outweighs the saving. The inputs come from the change's descriptors.
#include <QtTest/QtTest>

#include "wb/experiment/try_method.h"

using wb::experiment::chooseMethod;
using wb::experiment::MethodInputs;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

MethodInputs changesMath(double runS, int stored, double share = 0.9, bool trials = false) {
  MethodInputs in;
  in.evaluations = 20;  // often: whole runs know their time to target to within 5 % of the run
  in.math_changes = true, in.run_s = runS, in.references_stored = stored, in.to_target_share = share, in.trials = trials;
  return in;
}

}  // namespace

class TestTryMethod : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aChangeThatKeepsTheMathGoesByParts() {
    const auto c = chooseMethod(MethodInputs{});  // no reference runs: the run's length unknown
    QVERIFY(c.by_parts);
    QVERIFY2(has(c.reason, "keeps the training's math"), c.reason.c_str());
    const auto known = chooseMethod([] { MethodInputs in; in.run_s = 6.4; return in; }());
    QVERIFY(known.by_parts);
    QVERIFY2(known.parts_s < known.whole_s, known.reason.c_str());
    QVERIFY2(has(known.reason, "for the same precision"), known.reason.c_str());
  }

  // A run shorter than by parts' fixed part over 3 pairs: whole runs are cheaper even so.
  void aVeryShortRunGoesInWholeRunsEvenKeepingTheMath() {
    MethodInputs in;
    in.run_s = 1.0;
    const auto c = chooseMethod(in);
    QVERIFY2(!c.by_parts, c.reason.c_str());
    QVERIFY(c.whole_s < c.parts_s);
  }

  // No reference runs: runs that evaluate often (20 times) know their time to target closely, and
  // 6 pairs of them cost less than 5 reference runs, 5 runs to the target and the fixed part.
  void aChangeOfTheMathWithoutReferenceRunsGoesInWholeRunsWhenTheyEvaluateOften() {
    MethodInputs in = changesMath(0, 0);
    in.evaluations = 20;
    const auto c = chooseMethod(in);
    QVERIFY2(!c.by_parts, c.reason.c_str());
    QVERIFY2(has(c.reason, "no reference runs yet"), c.reason.c_str());
    QVERIFY2(has(c.reason, "6 pairs of whole runs that give the same precision"), c.reason.c_str());
  }

  // ... but a run evaluated once (lenet's one epoch) knows its time to target only as "by its end":
  // dozens of pairs match by parts' precision, so by parts even with its reference runs to make.
  void aChangeOfTheMathOfARunEvaluatedOnceGoesByPartsEvenWithoutReferenceRuns() {
    MethodInputs in = changesMath(0, 0);
    in.evaluations = 1;
    const auto c = chooseMethod(in);
    QVERIFY2(c.by_parts, c.reason.c_str());
    QVERIFY(c.pairs > 20);
    QVERIFY2(has(c.reason, "with no reference runs yet"), c.reason.c_str());
  }

  void aChangeOfTheMathWithReferenceRunsGoesByParts() {
    const auto c = chooseMethod(changesMath(6.4, 5));
    QVERIFY2(c.by_parts, c.reason.c_str());
    QVERIFY2(has(c.reason, "reference runs exist"), c.reason.c_str());
    QVERIFY(c.parts_s < c.whole_s);
    // Timed by short trials of whole processes (devices, the batch) too, at this length.
    QVERIFY(chooseMethod(changesMath(6.4, 5, 0.9, true)).by_parts);
  }

  // Trials and the fixed part outweigh what 5 runs to the target save over 5 pairs of a 1 s run.
  void aShortRunOfAChangeTimedByTrialsGoesInWholeRunsEvenWithReferenceRuns() {
    const auto c = chooseMethod(changesMath(1.0, 5, 0.9, true));
    QVERIFY2(!c.by_parts, c.reason.c_str());
  }

  // Some reference runs missing: those still to make count against by parts.
  void missingReferenceRunsCountAgainstByParts() {
    const auto all = chooseMethod(changesMath(6.4, 5)), two = chooseMethod(changesMath(6.4, 1));
    QVERIFY(two.parts_s > all.parts_s);
    QVERIFY2(!two.by_parts, two.reason.c_str());
    QVERIFY2(has(two.reason, "1 of its 5 reference runs exist"), two.reason.c_str());
  }

  // Early stopping is replayed on the reference runs: 5 to make cost less than 3 pairs.
  void earlyStoppingGoesByPartsWhenItsReplayCostsLess() {
    MethodInputs in;
    in.replay = true;
    QVERIFY(chooseMethod(in).by_parts);
    in.run_s = 6.4, in.references_stored = 5;
    const auto c = chooseMethod(in);
    QVERIFY2(c.by_parts && c.parts_s < 6.4, c.reason.c_str());
  }

  // The inputs as a try by parts reads its change: bf16 and a larger batch change the math (the
  // batch timed by trials), loader workers keep it, early stopping's patience is replayed.
  void theInputsComeFromTheDescriptors() {
    wb::experiment::TryOptions o;
    o.variant = o.baseline;
    o.variant.speedups.precision = "bf16-mixed";
    QVERIFY(wb::experiment::methodInputsOf(o, {}, 5, 5).math_changes);
    o.variant = o.baseline;
    o.variant.train.batch_size = 256;
    const auto batch = wb::experiment::methodInputsOf(o, {}, 5, 5);
    QVERIFY(batch.math_changes && batch.trials);
    QCOMPARE(batch.evaluations, 1.0);  // one epoch, evaluated at its end
    o.variant = o.baseline;
    o.variant.speedups.workers = 2;
    const auto workers = wb::experiment::methodInputsOf(o, {}, 5, 5);
    QVERIFY(!workers.math_changes && !workers.replay);
    QCOMPARE(workers.references_stored, 0);
    QCOMPARE(workers.run_s, 0.0);
    o.variant = o.baseline;
    o.variant.speedups.early_stopping.patience = 2;
    const auto stopping = wb::experiment::methodInputsOf(o, {}, 5, 5);
    QVERIFY(stopping.replay && !stopping.math_changes);
    o.variant = o.baseline;  // the evaluation batch: timed in evaluations, the training's math kept
    o.variant.train.eval_batch_size = 1;
    QVERIFY(!wb::experiment::methodInputsOf(o, {}, 5, 5).math_changes);
  }
};

QTEST_APPLESS_MAIN(TestTryMethod)
#include "test_try_method.moc"
