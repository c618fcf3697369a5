// try.json as one typed record (wb/proto/try_record.h): a try of whole-run pairs and a try by parts
// are written by one field list and read back; a try by parts has every part's key (null where a
// part was not measured), pairs of whole runs have none of them, a try by parts that stopped says
// why; keys the list does not know pass through and an older file reads with its defaults.
#include <QtTest/QtTest>

#include "wb/proto/try_record.h"

using namespace wb::proto;
using nlohmann::json;

namespace {

TryRecord pairs() {
  TryRecord r;
  r.status = "ok";
  r.speedup = "precision";
  r.setting = "precision bf16-mixed";
  r.measured_at = "2026-12-05T20:00:00Z";
  r.baseline = {"the baseline", wb::Config{}};
  r.variant.label = r.setting;
  r.variant.config.speedups.precision = "bf16-mixed";
  r.target_acc = 0.73;
  r.target = "73.00 % (the baseline's fair target)";
  r.max_pairs = 5;
  r.pairs = 2;
  r.settled = "clear";
  r.reached = true;
  r.medians["time_to_target_s"] = {4.0, 3.0};
  r.estimate = {{"to_target", {{"point", 1.33}, {"verdict", "faster"}}}};
  r.runs.push_back({1, false, true, "runs/a", "runs/b"});
  r.runs.push_back({2, true, true, "runs/c", "runs/d"});
  return r;
}

}  // namespace

class TestTryRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void pairsOfWholeRunsRoundTrip() {
    const json doc = tryRecordJson(pairs());
    QCOMPARE(doc["variant"]["config"]["speedups"]["precision"].get<std::string>(), std::string("bf16-mixed"));
    QCOMPARE(doc["runs"][1]["variant_first"].get<bool>(), true);
    QCOMPARE(doc["medians"]["time_to_target_s"]["variant"].get<double>(), 3.0);
    QVERIFY(doc["variant_command"].is_null());  // the same command: null, as readers expect
    for (const char* byParts : {"method", "math", "throughput", "samples", "references", "words", "error", "variant_looks"})
      QVERIFY2(!doc.contains(byParts), byParts);
    const TryRecord back = tryRecordFromJson(doc);
    QCOMPARE(back.runs.size(), size_t(2));
    QCOMPARE(back.variant.config.speedups.precision, std::string("bf16-mixed"));
    QVERIFY(back.target && !back.variant_command && !back.byParts());
    QCOMPARE(back.verdictWord(), std::string("faster"));
    QCOMPARE(tryRecordJson(back), doc);
  }

  void aTryByPartsHasEveryPartsKey() {
    TryRecord r = pairs();
    r.method = "composed";
    r.math = {{"kind", "math-check"}, {"keeps_math", true}};
    r.throughput = {{"kind", "segments"}};
    r.composed = {{"log_se", 0.05}};
    r.words = "1.10× faster to target: 1.10× throughput, same samples to target (keeps the math)";
    r.training_only = true;
    const json doc = tryRecordJson(r);
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    for (const char* unmeasured : {"evaluation", "early_stopping", "samples", "references"})
      QVERIFY2(doc.contains(unmeasured) && doc[unmeasured].is_null(), unmeasured);
    QVERIFY(doc["variant_runs"].is_array() && doc["training_only"].get<bool>());
    const TryRecord back = tryRecordFromJson(doc);
    QVERIFY(back.byParts() && back.math["keeps_math"].get<bool>());
    QCOMPARE(back.words, r.words);
    QCOMPARE(tryRecordJson(back), doc);
  }

  void aTryByPartsThatStoppedSaysWhy() {
    TryRecord r = pairs();
    r.status = "failed";
    r.method = "composed";
    r.error = "the math check was stopped";
    const json doc = tryRecordJson(r);
    QCOMPARE(doc["error"].get<std::string>(), r.error);
    QVERIFY(!doc.contains("math") && !doc.contains("words"));
    QCOMPARE(tryRecordFromJson(doc).error, r.error);
  }

  void unknownKeysPassAndOldFilesRead() {
    json doc = tryRecordJson(pairs());
    doc["written_later"] = {1, 2};
    QCOMPARE(tryRecordJson(tryRecordFromJson(doc))["written_later"], json::array({1, 2}));
    const TryRecord old = tryRecordFromJson(json{{"status", "ok"}, {"pairs", 3}, {"setting", "workers 2"}});
    QCOMPARE(old.pairs, 3);
    QVERIFY(old.runs.empty() && !old.byParts() && old.verdictWord().empty());
    QCOMPARE(tryRecordFromJson(json()).status, std::string());
  }
};

QTEST_APPLESS_MAIN(TestTryRecord)
#include "test_try_record.moc"
