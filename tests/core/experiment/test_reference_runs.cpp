// The reference runs' evaluation interval: twenty evaluations over the baseline's length, never more
// than ten an epoch, and a store folder that keeps the interval it was made with (its runs share one
// resolution, so a folder made under an earlier rule is reused as it is). Their runs as real
// processes are tested through the CLI (tests/app/test_cli_try_parts.cpp).
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "wb/experiment/reference_runs.h"

using namespace wb::experiment;
using nlohmann::json;

namespace {

wb::Config lenet(int epochs, int batch = 64) {
  wb::Config c;
  c.train.epochs = epochs;
  c.train.batch_size = batch;
  return c;
}

}  // namespace

class TestReferenceRuns : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void oneEpochEvaluatesTenTimes() {
    // 60,000 images at 64 a step: 937 steps, an evaluation every 93.
    QCOMPARE(referenceEvalEvery(lenet(1), 60000), int64_t(93));
    QCOMPARE(referenceEvalEvery(lenet(2), 60000), int64_t(93));  // 20 over two epochs: still 10 an epoch
  }

  void aLongRunEvaluatesTwentyTimesNotTenAnEpoch() {
    QCOMPARE(referenceEvalEvery(lenet(10), 60000), int64_t(937 * 10 / 20));
    QCOMPARE(referenceEvalEvery(lenet(100), 60000), int64_t(937 * 100 / 20));
    // The devices' global batch sets the steps: two devices halve them.
    wb::Config two = lenet(10);
    two.speedups.devices = 2;
    QCOMPARE(referenceEvalEvery(two, 60000), int64_t(468 * 10 / 20));
  }

  void maxStepsEndsTheRunSooner() {
    wb::Config c = lenet(10);
    c.train.max_steps = 400;
    QCOMPARE(referenceEvalEvery(c, 60000), int64_t(93));  // 400 / 20 = 20 < 93: ten an epoch rules
    c.train.max_steps = 4000;
    QCOMPARE(referenceEvalEvery(c, 60000), int64_t(200));
    QCOMPARE(referenceEvalEvery(lenet(1), 10), int64_t(1));  // fewer steps than evaluations: each step
  }

  void aStoredFolderKeepsItsOwnInterval() {
    QTemporaryDir root;
    ReferenceOptions o;
    o.baseline = lenet(10);
    o.dataset_id = "0123456789abcdef";
    o.train_samples = 60000;
    o.store = root.path().toStdString();
    o.runs = 0;  // nothing to run: the folder alone
    o.log = nullptr;
    auto made = ensureReferenceRuns(o);
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
    QCOMPARE(made->eval_every_steps, int64_t(468));
    QCOMPARE(made->resolution, 468.0 * 64);
    const std::filesystem::path file = made->dir / "reference.json";
    json doc = json::parse(std::ifstream(file));
    QCOMPARE(doc["eval_every_steps"].get<int64_t>(), int64_t(468));
    // A folder made when the rule was ten an epoch: its interval stays, and so does its resolution.
    doc["eval_every_steps"] = 93;
    std::ofstream(file) << doc.dump(2);
    auto again = ensureReferenceRuns(o);
    QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
    QCOMPARE(again->eval_every_steps, int64_t(93));
    QCOMPARE(again->resolution, 93.0 * 64);
    QCOMPARE(json::parse(std::ifstream(file))["eval_every_steps"].get<int64_t>(), int64_t(93));
  }
};

QTEST_GUILESS_MAIN(TestReferenceRuns)
#include "test_reference_runs.moc"
