// reference.json as one typed record (wb/proto/reference_record.h): written by its field list
// byte for byte as the reference runs wrote it before it had one, read back whole; runs that are
// no list (or hold something other than runs) are named, for the reader to rebuild the record.
#include <QtTest/QtTest>

#include "wb/proto/reference_record.h"

using namespace wb::proto;
using nlohmann::json;

namespace {

ReferenceRecord twoRuns() {
  ReferenceRecord r;
  r.key = "mnist-cnn-3f2a";
  r.dataset_id = "fashion-mnist-9c1e";
  r.config = {{"model", {{"name", "mnist-cnn"}}}, {"train", {{"epochs", 1}}}};
  r.eval_every_steps = 94;
  r.updated_at = "2026-12-07T21:00:00Z";
  r.runs = {{1001, "runs/seed-1001", "ok"}, {1002, "runs/seed-1002", "running"}};
  return r;
}

}  // namespace

class TestReferenceRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The bytes on disk are those of the literal the record replaced.
  void writesTheSameBytesAsBefore() {
    const ReferenceRecord r = twoRuns();
    json runs = json::array();
    for (const auto& s : r.runs) runs.push_back({{"seed", uint64_t(s.seed)}, {"dir", s.dir}, {"status", s.status}});
    const json before = {{"key", r.key},           {"dataset_id", r.dataset_id}, {"config", r.config},
                         {"eval_every_steps", r.eval_every_steps}, {"updated_at", r.updated_at}, {"runs", runs}};
    QCOMPARE(QString::fromStdString(referenceRecordJson(r).dump(2)), QString::fromStdString(before.dump(2)));
  }

  void readsBackWhatItWrote() {
    const ReferenceRecord back = referenceRecordFromJson(referenceRecordJson(twoRuns()));
    QCOMPARE(back.key, twoRuns().key);
    QCOMPARE(back.dataset_id, twoRuns().dataset_id);
    QCOMPARE(back.config, twoRuns().config);
    QCOMPARE(back.eval_every_steps, int64_t(94));
    QCOMPARE(int(back.runs.size()), 2);
    QCOMPARE(back.runs[1].seed, int64_t(1002));
    QCOMPARE(back.runs[1].dir, std::string("runs/seed-1002"));
    QCOMPARE(back.runs[1].status, std::string("running"));
    QCOMPARE(referenceRunsProblem(referenceRecordJson(twoRuns())), std::string());
  }

  void runsThatAreNoRunsAreNamed() {
    QCOMPARE(referenceRunsProblem(json{{"runs", 3}}), std::string("its runs are not a list"));
    QCOMPARE(referenceRunsProblem(json{{"runs", json::array({json::object(), 7})}}),
             std::string("its runs hold a JSON number, not a run"));
    QCOMPARE(referenceRunsProblem(json{{"key", "k"}}), std::string());  // none listed yet
    QCOMPARE(referenceRecordFromJson(json{{"runs", json::array({7})}}).runs.size(), size_t(0));
  }
};

QTEST_APPLESS_MAIN(TestReferenceRecord)
#include "test_reference_record.moc"
