// The speed a try by parts keeps on disk (wb/records/speed_record.h): one record for the segments',
// the trials' and an unchanged step's, written and read by one field list; what only one kind has
// stays absent in the others, a contended record says so in its estimate, keys it does not know
// pass through and an older file reads with its defaults.
#include <QtTest/QtTest>

#include "wb/records/speed_record.h"

using namespace wb::records;
using namespace wb::stats;
using nlohmann::json;

namespace {

SpeedRecord segments() {
  SpeedRecord r;
  r.kind = "segments";
  r.changed = "speedups.workers 0 → 2";
  r.device = "cpu";
  r.steps_per_segment = 105;
  r.steps_sized = true;
  r.rounds = 3;
  r.baseline_rates = {100, 102, 98};
  r.variant_rates = {110, 111, 108};
  r.variant_first = json::array({true, false, true});
  RoundsNoise noise;
  noise.sigma = 0.02, noise.df = 2;
  r.noise = noise;
  r.estimate.point = 1.09, r.estimate.lo = 1.03, r.estimate.hi = 1.15, r.estimate.pairs = 3;
  r.estimate.verdict = Verdict::Faster;
  r.other_cores = 0.05;
  r.set_aside = 0;
  r.cannot_be_faster = false;
  r.total_s = 4.6;
  return r;
}

}  // namespace

class TestSpeedRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void segmentsRoundTrip() {
    const json doc = speedRecordJson(segments());
    QCOMPARE(doc["kind"].get<std::string>(), std::string("segments"));
    QCOMPARE(doc["steps_per_segment"].get<int>(), 105);
    QCOMPARE(doc["estimate"]["verdict"].get<std::string>(), std::string("faster"));
    QVERIFY2(doc["estimate"]["text"].get<std::string>().find("1.09×") != std::string::npos, doc.dump().c_str());
    QVERIFY2(doc["noise"]["band"].is_number() && doc["noise"]["df"].get<int>() == 2, doc.dump().c_str());
    QVERIFY2(!doc.contains("steps_per_trial") && !doc.contains("baseline_eval_s") && !doc.contains("passes_per_segment"),
             doc.dump().c_str());
    const SpeedRecord back = speedRecordFromJson(doc);
    QCOMPARE(back.rounds, 3);
    QCOMPARE(back.baseline_rates, (std::vector<double>{100, 102, 98}));
    QCOMPARE(back.estimate.point, 1.09);
    QVERIFY(back.estimate.verdict == Verdict::Faster);
    QVERIFY(back.noise && back.noise->df == 2 && std::abs(back.noise->sigma - 0.02) < 1e-12);
    QCOMPARE(back.variant_first, json::array({true, false, true}));
    QCOMPARE(speedRecordJson(back), doc);
  }

  void trialsAndEvaluationsHaveTheirOwnFields() {
    SpeedRecord t;
    t.kind = "evaluation trials";
    t.steps_per_trial = 120;
    t.evaluations_per_trial = 3;
    t.baseline_eval_s = std::vector<double>{0.30, 0.31, 0.29};
    t.variant_eval_s = std::vector<double>{0.25, 0.26, 0.24};
    const json doc = speedRecordJson(t);
    QCOMPARE(doc["steps_per_trial"].get<int64_t>(), int64_t(120));
    QCOMPARE(doc["baseline_eval_s"].size(), size_t(3));
    QVERIFY2(!doc.contains("device") && !doc.contains("noise") && !doc.contains("steps_per_segment"), doc.dump().c_str());
    SpeedRecord e = segments();
    e.kind = "evaluation segments";
    e.steps_per_segment = 2;
    e.baseline_train_rates = std::vector<double>{15000};
    QCOMPARE(speedRecordJson(e)["passes_per_segment"].get<int>(), 2);
    QCOMPARE(speedRecordFromJson(speedRecordJson(e)).baseline_train_rates.value_or(std::vector<double>{}).size(), size_t(1));
  }

  void contendedSaysSoInItsEstimate() {
    SpeedRecord r = segments();
    r.contended = true;
    const json doc = speedRecordJson(r);
    QCOMPARE(doc["estimate"]["verdict"].get<std::string>(), std::string("contended"));
    QVERIFY(speedRecordFromJson(doc).contended);
  }

  void unchangedIsExactlyOne() {
    const json doc = speedRecordJson(unchangedSpeed());
    QCOMPARE(doc["kind"].get<std::string>(), std::string("unchanged"));
    QCOMPARE(doc["estimate"]["point"].get<double>(), 1.0);
    QCOMPARE(doc["estimate"]["text"].get<std::string>(), std::string("1.00× (the training steps are untouched)"));
    QVERIFY(speedRecordFromJson(doc).unchanged());
  }

  void unknownKeysPassThroughAndOldFilesRead() {
    json doc = speedRecordJson(segments());
    doc["written_by_a_newer_version"] = {{"x", 1}};
    doc.erase("noise");
    doc.erase("total_s");
    const SpeedRecord back = speedRecordFromJson(doc);
    QVERIFY(!back.noise && !back.total_s);
    QCOMPARE(speedRecordJson(back)["written_by_a_newer_version"]["x"].get<int>(), 1);
    QCOMPARE(speedRecordFromJson(json()).kind, std::string());
    QCOMPARE(speedRecordFromJson(json::array()).rounds, 0);
  }
};

QTEST_APPLESS_MAIN(TestSpeedRecord)
#include "test_speed_record.moc"
