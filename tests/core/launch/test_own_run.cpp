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
};

QTEST_APPLESS_MAIN(TestOwnRun)
#include "test_own_run.moc"
