// Event encoding and the tolerant readers (partial last line, unknown fields/types, truncation).
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <fstream>
#include <limits>

#include "wb/common/fs.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;

class TestEvents : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void roundTripAndNonFinite() {
    auto ev = wb::proto::makeEvent("step", 1, 2.5);
    ev["loss"] = std::numeric_limits<double>::infinity();
    ev["ms"] = {{"fwd", 1.5}};
    auto line = wb::proto::encodeEvent(ev);
    QVERIFY(line.find('\n') == std::string::npos);
    auto back = wb::proto::decodeEvent(line);
    QVERIFY(back.has_value());
    QCOMPARE((*back)["v"].get<int>(), wb::proto::kEventVersion);
    QCOMPARE((*back)["rank"].get<int>(), 1);
    QVERIFY((*back)["loss"].is_null());
    QCOMPARE((*back)["ms"]["fwd"].get<double>(), 1.5);
  }

  void rejectsGarbage_data() {
    QTest::addColumn<QString>("line");
    QTest::newRow("blank") << "   ";
    QTest::newRow("half object") << "{\"type\":\"step\",\"loss\":0.";
    QTest::newRow("no type") << R"({"v":1,"loss":1})";
    QTest::newRow("array") << "[1,2]";
    QTest::newRow("type not string") << R"({"type":3})";
  }
  void rejectsGarbage() {
    QFETCH(QString, line);
    QVERIFY(!wb::proto::decodeEvent(line.toStdString()).has_value());
  }

  void lineBufferKeepsPartialTail() {
    wb::proto::LineBuffer b;
    auto l1 = b.feed(std::string("{\"type\":\"a\"}\n{\"type\":"));
    QCOMPARE(int(l1.size()), 1);
    QCOMPARE(QString::fromStdString(b.pending()), QStringLiteral("{\"type\":"));
    auto l2 = b.feed(std::string("\"b\"}\r\n"));
    QCOMPARE(int(l2.size()), 1);
    QCOMPARE(QString::fromStdString(l2[0]), QStringLiteral("{\"type\":\"b\"}"));
    QVERIFY(!b.finish().has_value());
  }

  void followsGrowingFileWithUnknownsAndTruncation() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("events.jsonl")).toStdString();
    std::ofstream out(path, std::ios::binary);
    out << R"({"v":1,"type":"start","rank":0,"t":0,"future_field":{"x":1}})" "\n";
    out << R"({"v":1,"type":"hologram","rank":0,"t":1})" "\n";  // unknown type: passed through
    out << "not json at all\n";
    out << "{\"v\":1,\"type\":\"step\",\"rank\":0,\"t\":2,\"loss\":0.";   // partial
    out.flush();
    wb::proto::EventFileReader reader(path);
    auto first = reader.poll();
    QCOMPARE(int(first.size()), 2);
    QCOMPARE(QString::fromStdString(first[1]["type"].get<std::string>()), QStringLiteral("hologram"));
    QCOMPARE(reader.malformedLines(), int64_t(1));
    out << "5}\n";
    out.flush();
    auto second = reader.poll();
    QCOMPARE(int(second.size()), 1);
    QCOMPARE(second[0]["loss"].get<double>(), 0.5);
    // A file cut in the middle of its last record (a killed writer): the rest still reads.
    out << "{\"v\":1,\"type\":\"end\",\"stat";
    out.close();
    auto rest = reader.finish();
    QCOMPARE(int(rest.size()), 0);
    QCOMPARE(reader.malformedLines(), int64_t(2));
    int64_t malformed = 0;
    auto all = wb::proto::readEventsFile(path, &malformed);
    QCOMPARE(int(all.size()), 3);
    QCOMPARE(malformed, int64_t(2));
  }

  void sinkAppendsAndFlushesEachRecord() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("e.jsonl")).toStdString();
    wb::proto::EventSink sink;
    QVERIFY(sink.openFile(path).ok());
    sink.write(wb::proto::makeEvent("start", 0, 0));
    // Readable by another reader before the sink is closed (flushed per record).
    auto events = wb::proto::readEventsFile(path);
    QCOMPARE(int(events.size()), 1);
    QVERIFY(!sink.openFile("/nonexistent-dir/x/e.jsonl").ok());
  }

  void atomicWriteKeepsOldFileOnFailure() {
    QTemporaryDir dir;
    wb::proto::RunDir run{dir.filePath(QStringLiteral("run")).toStdString()};
    QVERIFY(run.create().ok());
    QVERIFY(wb::proto::writeJsonAtomic(run.summary(), json{{"status", "ok"}}).ok());
    auto back = wb::proto::readJsonFile(run.summary());
    QVERIFY(back.ok());
    QCOMPARE(QString::fromStdString((*back)["status"].get<std::string>()), QStringLiteral("ok"));
    auto bad = wb::writeFileAtomic("/proc/wb-not-writable/x.json", "{}");
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().message).contains(QStringLiteral("/proc/wb-not-writable/x.json")));
  }
};

QTEST_APPLESS_MAIN(TestEvents)
#include "test_events.moc"
