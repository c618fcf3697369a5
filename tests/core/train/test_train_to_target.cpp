// Train to target (train.stop_at_accuracy, train.eval_every_steps) on real Fashion-MNIST runs:
// a run stops right after the first evaluation that reaches the target, evaluating between an
// epoch's steps when asked, and its summary says when (samples and steps over every life); a
// target it cannot reach leaves it to run to its cap, with no such figures; a resumed run counts
// its earlier life's samples.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include "../../support/machine.h"
#include "trainer_test_util.h"

namespace {

std::vector<double> accuracies(const Ran& r) {
  std::vector<double> out;
  for (const auto& e : r.of("eval")) out.push_back(e["val_acc"].get<double>());
  return out;
}

}  // namespace

class TestTrainToTarget : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingFashionMnist());
  }

  // A low target: reached at an evaluation between steps, long before the epoch's end.
  void stopsAtTheFirstEvaluationThatReachesIt() {
    wb::Config c = smallConfig();  // 3,000 samples: 47 steps an epoch
    c.train.epochs = 3;
    c.train.eval_every_steps = 5;
    c.train.stop_at_accuracy = 0.3;
    const Ran r = train(c);
    const auto& s = r.outcome.summary;
    QCOMPARE(r.outcome.status, std::string("ok"));
    QVERIFY(s.samples_to_target && s.steps_to_target);
    QCOMPARE(*s.target_val_acc, 0.3);
    const int64_t steps = *s.steps_to_target;
    QVERIFY2(steps > 0 && steps < 47 * 3 && steps % 5 == 0, std::to_string(steps).c_str());
    QCOMPARE(*s.steps, steps);                   // it trained no further
    QCOMPARE(*s.samples_to_target, steps * 64);  // one rank, full batches
    const auto accs = accuracies(r);
    QVERIFY(!accs.empty());
    QVERIFY(accs.back() >= 0.3);
    for (size_t i = 0; i + 1 < accs.size(); ++i) QVERIFY(accs[i] < 0.3);  // the first to reach it
    QCOMPARE(r.of("eval").back()["step"].get<int64_t>(), steps);
    QVERIFY2(s.message && s.message->find("reached the target") != std::string::npos, s.message.value_or("").c_str());
  }

  // Out of reach: the run goes to its cap (max_steps), and says the target was not reached.
  void anUnreachableTargetRunsToTheCap() {
    wb::Config c = smallConfig();
    c.train.max_steps = 20;
    c.train.eval_every_steps = 10;
    c.train.stop_at_accuracy = 0.999;
    const Ran r = train(c);
    const auto& s = r.outcome.summary;
    QCOMPARE(r.outcome.status, std::string("ok"));
    QCOMPARE(*s.steps, int64_t(20));
    QCOMPARE(*s.target_val_acc, 0.999);
    QVERIFY(!s.samples_to_target && !s.steps_to_target);
    const json j = wb::proto::toJson(s);
    QVERIFY(!j.contains("samples_to_target") || j["samples_to_target"].is_null());
    QCOMPARE(int(r.of("eval").size()), 2);  // at step 10, and the cap's own at step 20
  }

  // Off (the default): no evaluation between steps, no target in the summary.
  void offByDefault() {
    wb::Config c = smallConfig();
    c.train.max_steps = 12;
    const Ran r = train(c);
    QCOMPARE(int(r.of("eval").size()), 1);
    QVERIFY(!r.outcome.summary.target_val_acc && !r.outcome.summary.samples_to_target);
  }

  // A resumed run: its first life (one epoch, the target out of reach) then a second that reaches
  // a lower one; the samples to target count both lives.
  void resumeCountsEveryLife() {
    QTemporaryDir dir;
    wb::Config c = smallConfig();
    c.train.epochs = 1;
    c.train.stop_at_accuracy = 0.999;
    const Ran first = train(c, dir.path().toStdString());
    QVERIFY(!first.outcome.summary.samples_to_target);
    const int64_t firstSamples = *first.outcome.summary.samples;
    c.train.epochs = 3;
    c.train.stop_at_accuracy = 0.3;
    c.train.eval_every_steps = 5;
    Ran second;
    {
      wb::proto::EventSink sink;
      sink.setObserver([&](const json& e) { second.events.push_back(e); });
      wb::train::TrainerOptions o;
      o.config = c;
      o.run_dir = dir.path().toStdString();
      o.resume_from = dir.filePath(QStringLiteral("checkpoints/last.pt")).toStdString();
      wb::train::Trainer t(o, sink);
      auto out = t.run();
      QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
      second.outcome = out.value();
    }
    const auto& s = second.outcome.summary;
    QVERIFY2(s.samples_to_target, s.message.value_or("no message").c_str());
    QVERIFY(*s.samples_to_target > firstSamples);                 // the first life's count is kept
    QCOMPARE(*s.samples_to_target, *s.samples);                   // it stopped there
    QVERIFY(*s.samples_to_target > *s.train_samples);             // more than this life trained
    QCOMPARE(*s.steps_to_target, *s.steps);
  }
};

QTEST_APPLESS_MAIN(TestTrainToTarget)
#include "test_train_to_target.moc"
