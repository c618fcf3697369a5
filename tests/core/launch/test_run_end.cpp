// endRun, the one end of a run (the launcher's and a rank started alone's): summary.json is
// written before `end` and holds what `end` carries; a failed run says why and names its rank;
// records the events file lost fail the run, keeping the training's own end; the trainer's
// fields (and fields a newer writer added) reach summary.json unchanged.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <string>
#include <vector>

#include "wb/launch/run_end.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;
namespace proto = wb::proto;
using wb::launch::RunEndEvents;
using wb::launch::RunEnding;

namespace {

// A run folder with an open events file, and the events endRun emits (to the sink, as the
// launcher's emit does, and kept here), each with whether summary.json existed when it came.
struct Fixture {
  QTemporaryDir tmp;
  proto::RunDir run;
  proto::EventSink sink;
  std::vector<json> emitted;
  std::vector<bool> summaryWritten;

  Fixture() {
    run.root = std::filesystem::path(tmp.path().toStdString()) / "run-1";
    QVERIFY(run.create().ok());
    QVERIFY(sink.openFile(run.events().string()).ok());
  }
  RunEndEvents events(int rank = -1) {
    RunEndEvents e;
    e.rank = rank;
    e.clock = [] { return 7.5; };
    e.send = [this](const json& ev) {
      sink.write(ev);
      emitted.push_back(ev);
      summaryWritten.push_back(std::filesystem::exists(run.summary()));
    };
    return e;
  }
  proto::RunSummary onDisk() const { return proto::readRunSummary(proto::readJsonFile(run.summary()).value()); }
  const json* find(const char* type) const {
    for (const auto& ev : emitted)
      if (proto::stringOr(ev, "type", "") == type) return &ev;
    return nullptr;
  }
};

proto::RunSummary trainersPart() {
  proto::RunSummary s;
  s.epochs = 2;
  s.steps = 938;
  s.train_s = 12.5;
  s.best_val_acc = 0.87;
  s.unknown = {{"gpu_clock", {{"factor", 1.01}}}};  // a field a newer trainer writes
  return s;
}

}  // namespace

class TestRunEnd : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void anOkRunWritesItsSummaryThenItsEnd() {
    Fixture f;
    RunEnding ending;
    ending.status = proto::kStatusOk;
    ending.summary = trainersPart();
    const auto ended = wb::launch::endRun(f.run, "fmnist", f.sink, ending, f.events());
    QVERIFY(ended.written.ok());
    QCOMPARE(ended.status, std::string("ok"));
    QCOMPARE(f.emitted.size(), size_t{1});  // no error, no warning: the end alone
    QVERIFY(!f.find("error"));
    const proto::EndEvent end = proto::readEndEvent(f.emitted.back());
    QCOMPARE(end.status, std::string("ok"));
    QCOMPARE(proto::readEnvelope(f.emitted.back()).rank, std::optional<int>(-1));
    QVERIFY(f.summaryWritten.back());  // summary.json first: whoever sees `end` can read it
    const proto::RunSummary s = f.onDisk();
    QCOMPARE(proto::toJson(s), proto::toJson(end.summary));
    QCOMPARE(s.status, std::optional<std::string>("ok"));
    QCOMPARE(s.run_id, std::optional<std::string>("run-1"));
    QCOMPARE(s.name, std::optional<std::string>("fmnist"));
    QCOMPARE(s.run_dir, std::optional<std::string>(f.run.root.string()));
    QCOMPARE(s.steps, std::optional<int64_t>(938));
    QCOMPARE(s.best_val_acc, std::optional<double>(0.87));
    QCOMPARE(s.unknown, trainersPart().unknown);
    QVERIFY(!s.error && !s.failed_rank && !s.events_lost && !s.training_status);
    // The end is in events.jsonl too, the file's last record.
    const auto filed = proto::readEventsFile(f.run.events().string());
    QCOMPARE(proto::stringOr(filed.back(), "type", ""), std::string("end"));
  }

  void aFailedRunSaysWhyAndNamesItsRank() {
    Fixture f;
    RunEnding ending;
    ending.status = proto::kStatusFailed;
    ending.error = "rank 1 exited with code 3";
    ending.error_code = "rank_failed";
    ending.failed_rank = 1;
    ending.summary.log_tail = "cannot read its shard";
    const auto ended = wb::launch::endRun(f.run, "fmnist", f.sink, ending, f.events());
    QCOMPARE(ended.failed_rank, 1);
    QCOMPARE(f.emitted.size(), size_t{2});
    const proto::ErrorEvent err = proto::readErrorEvent(f.emitted[0]);
    QCOMPARE(proto::readEnvelope(f.emitted[0]).rank, std::optional<int>(1));  // the rank that failed
    QCOMPARE(err.message, ending.error);
    QCOMPARE(err.code, std::string("rank_failed"));
    QCOMPARE(err.log_tail, std::optional<std::string>("cannot read its shard"));
    QVERIFY(!f.summaryWritten[0]);  // error, summary.json, end
    const proto::RunSummary s = f.onDisk();
    QCOMPARE(s.status, std::optional<std::string>("failed"));
    QCOMPARE(s.error, std::optional<std::string>(ending.error));
    QCOMPARE(s.failed_rank, std::optional<int>(1));
    QCOMPARE(s.log_tail, std::optional<std::string>("cannot read its shard"));
  }

  // Records the events file did not take: the run ends failed whatever the training did, and
  // says so; the training's own end is kept. A rank alone writes its own rank and code.
  void lostRecordsFailTheRun_data() {
    QTest::addColumn<QString>("training");
    QTest::addColumn<int>("failedRank");
    QTest::addColumn<int>("ownerRank");
    QTest::addColumn<QString>("code");
    QTest::newRow("launcher, training ok") << "ok" << -1 << -1 << "events_lost";
    QTest::newRow("launcher, rank 1 failed too") << "failed" << 1 << -1 << "rank_failed";
    QTest::newRow("a rank alone, early-stopped") << "early-stopped" << -1 << 0 << "io";
  }
  void lostRecordsFailTheRun() {
    QFETCH(QString, training);
    QFETCH(int, failedRank);
    QFETCH(int, ownerRank);
    QFETCH(QString, code);
    Fixture f;
    f.sink.abandonFile();  // the file gave up: every record from now on is lost
    f.sink.write(proto::makeEvent("step", 0, 1.0));
    RunEnding ending;
    ending.status = training.toStdString();
    if (failedRank >= 0) {
      ending.error = "rank 1 exited with code 1";
      ending.error_code = "rank_failed";
      ending.failed_rank = failedRank;
    }
    ending.summary = trainersPart();
    RunEndEvents events = f.events(ownerRank);
    if (ownerRank >= 0) events.lost_code = "io";
    const auto ended = wb::launch::endRun(f.run, "fmnist", f.sink, ending, events);
    QCOMPARE(ended.status, std::string("failed"));
    const proto::RunSummary s = f.onDisk();  // summary.json holds what the run reached
    QCOMPARE(s.status, std::optional<std::string>("failed"));
    QCOMPARE(s.training_status, std::optional<std::string>(training.toStdString()));
    QVERIFY(s.events_lost.value_or(0) >= 1);
    QVERIFY2(s.error->find("could not be written") != std::string::npos, s.error->c_str());
    if (failedRank >= 0) QVERIFY2(s.error->rfind("rank 1 exited", 0) == 0, s.error->c_str());
    QCOMPARE(s.steps, std::optional<int64_t>(938));
    const json* err = f.find("error");
    QVERIFY(err);
    QCOMPARE(proto::readErrorEvent(*err).code, code.toStdString());
    QCOMPARE(proto::readEnvelope(*err).rank, std::optional<int>(failedRank >= 0 ? failedRank : ownerRank));
    QCOMPARE(proto::readEnvelope(f.emitted.back()).rank, std::optional<int>(ownerRank));
    QCOMPARE(proto::readEndEvent(f.emitted.back()).status, std::string("failed"));
  }
};

QTEST_APPLESS_MAIN(TestRunEnd)
#include "test_run_end.moc"
