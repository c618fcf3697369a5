// A rank 0 started alone (torchrun, srun) owns its run folder as the launcher would
// (wb/launch/own_run.h): created, locked, config.json written, its events in events.jsonl; a
// folder that already holds a run is refused unless the rank continues it.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <fstream>

#include "wb/launch/own_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"

class TestOwnRun : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aNewFolderIsMadeLockedAndWritten() {
    QTemporaryDir root;
    const std::string dir = root.filePath(QStringLiteral("run")).toStdString();
    wb::Config config;
    config.name = "own";
    wb::proto::EventSink sink;
    auto own = wb::launch::openOwnRun(config, dir, false, sink);
    QVERIFY2(own.ok(), own.ok() ? "" : own.error().message.c_str());
    QVERIFY(std::filesystem::exists(own->run.config()));
    sink.write(wb::proto::toEvent(wb::proto::WarningEvent{"hello", std::nullopt}, 0, 0.0));
    std::ifstream events(own->run.events());
    std::string line;
    QVERIFY(std::getline(events, line) && line.find("hello") != std::string::npos);
    wb::proto::EventSink other;  // a second rank 0 on the same folder meets the lock
    QVERIFY(!wb::launch::openOwnRun(config, dir, true, other).ok());
  }

  void aFolderHoldingARunIsRefusedUnlessContinued() {
    QTemporaryDir root;
    const std::string dir = root.filePath(QStringLiteral("run")).toStdString();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/events.jsonl") << "{\"type\":\"start\"}\n";
    wb::proto::EventSink sink;
    auto refused = wb::launch::openOwnRun(wb::Config{}, dir, false, sink);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message.find("already holds a run") != std::string::npos &&
                 refused.error().message.find("--resume") != std::string::npos,
             refused.error().message.c_str());
    std::ifstream kept(dir + "/events.jsonl");
    std::string line;
    QVERIFY(std::getline(kept, line) && line == "{\"type\":\"start\"}");  // nothing written is lost
    wb::proto::EventSink again;
    QVERIFY(wb::launch::openOwnRun(wb::Config{}, dir, true, again).ok());
  }

  // Of a group started alone, rank 0 owns the folder and the others none; a group needs a
  // folder named to agree on.
  void rankZeroOwnsTheFolder() {
    QTemporaryDir root;
    const std::string dir = root.filePath(QStringLiteral("run")).toStdString();
    wb::proto::EventSink sink;
    auto none = wb::launch::openRankRun(wb::Config{}, "", false, 0, 2, sink);
    QVERIFY(!none.ok());
    QVERIFY2(none.error().message.find("--run-dir is required when WORLD_SIZE > 1") != std::string::npos,
             none.error().message.c_str());
    auto other = wb::launch::openRankRun(wb::Config{}, dir, false, 1, 2, sink);
    QVERIFY(other.ok() && !other->has_value());
    QVERIFY(!std::filesystem::exists(dir));  // rank 1 writes nothing of the folder
    auto owner = wb::launch::openRankRun(wb::Config{}, dir, false, 0, 2, sink);
    QVERIFY(owner.ok() && owner->has_value());
    QVERIFY(std::filesystem::exists((*owner)->run.config()));
  }

  // A stopped run's end names who stopped it when that is known (Slurm's word under srun), and
  // carries the rank's own wall time, in summary.json and its `end`.
  void theOwnerEndsTheRunNamingWhoStoppedIt() {
    QTemporaryDir root;
    const std::string dir = root.filePath(QStringLiteral("run")).toStdString();
    wb::Config config;
    config.name = "stopped";
    wb::proto::EventSink sink;
    auto own = wb::launch::openOwnRun(config, dir, false, sink);
    QVERIFY(own.ok());
    std::vector<nlohmann::json> sent;
    wb::launch::RunEndEvents events;
    events.rank = 0;
    events.clock = [] { return 1.0; };
    events.send = [&](const nlohmann::json& ev) { sent.push_back(ev), sink.write(ev); };
    wb::launch::OwnRunEnding ending{wb::proto::kStatusCancelled, "", {}, 12.5,
                                    [] { return std::string("Slurm cancelled job 7: time limit"); }};
    const wb::launch::EndedRun ended = wb::launch::endOwnRun(*own, config, sink, ending, events);
    QVERIFY(ended.written.ok());
    QCOMPARE(QString::fromStdString(ended.status), QStringLiteral("cancelled"));
    QCOMPARE(QString::fromStdString(ended.summary.error.value_or("")), QStringLiteral("Slurm cancelled job 7: time limit"));
    QCOMPARE(ended.summary.run_wall_s.value_or(0), 12.5);
    QVERIFY(!sent.empty() && sent.back()["type"] == "end");
    std::ifstream summary(own->run.summary());
    const auto doc = nlohmann::json::parse(summary, nullptr, false);
    QVERIFY2(doc.value("error", "") == "Slurm cancelled job 7: time limit", doc.dump().c_str());
  }
};

QTEST_APPLESS_MAIN(TestOwnRun)
#include "test_own_run.moc"
