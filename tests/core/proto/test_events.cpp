// Event encoding and the tolerant readers (partial last line, unknown fields/types, truncation).
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <sys/resource.h>

#include <csignal>
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

  // A step or eval whose figures cannot be read is skipped like a line that is not JSON, and
  // says why; a null figure (a NaN the writer knew of) and the other types' fields are not judged.
  void stepAndEvalFiguresMustBeNumbers_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("why");  // empty: read
    QTest::newRow("step") << R"({"type":"step","step":1,"loss":0.5})" << "";
    QTest::newRow("step, loss null") << R"({"type":"step","step":1,"loss":null})" << "";
    QTest::newRow("step, no loss") << R"({"type":"step","step":1})" << R"(a step event without "loss")";
    QTest::newRow("step, loss a word") << R"({"type":"step","loss":"low"})"
                                       << R"(a step event's "loss" is "low", not a number)";
    QTest::newRow("step, samples a list") << R"({"type":"step","loss":1,"samples_per_s":[1]})"
                                          << R"(a step event's "samples_per_s" is [1], not a number)";
    QTest::newRow("step, t a word") << R"({"type":"step","loss":1,"t":"soon"})"
                                    << R"(a step event's "t" is "soon", not a number)";
    QTest::newRow("eval, accuracy only") << R"({"type":"eval","val_acc":0.8})" << "";
    QTest::newRow("eval, neither") << R"({"type":"eval","epoch":1})"
                                   << R"(an eval event with neither "val_acc" nor "val_loss")";
    QTest::newRow("eval, acc a word") << R"({"type":"eval","val_acc":"high","val_loss":0.3})"
                                      << R"(an eval event's "val_acc" is "high", not a number)";
    QTest::newRow("epoch, not judged") << R"({"type":"epoch","seconds":"many"})" << "";
    QTest::newRow("not JSON") << R"({"type":"step","loss":NaN})" << "not JSON (a writer killed mid-record leaves such a line)";
  }
  void stepAndEvalFiguresMustBeNumbers() {
    QFETCH(QString, line);
    QFETCH(QString, why);
    std::string said = "(untouched)";
    const auto ev = wb::proto::decodeEvent(line.toStdString(), &said);
    QCOMPARE(ev.has_value(), why.isEmpty());
    if (!why.isEmpty()) QCOMPARE(QString::fromStdString(said), why);
  }

  // A reader of a file names the lines it skipped: their number, why, and how they begin.
  void skippedLinesAreNamed() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("events.jsonl")).toStdString();
    std::ofstream(path) << R"({"type":"run"})" "\n\n"
                        << R"({"type":"step","loss":"low"})" "\n"
                        << R"({"type":"step","loss":0.5})" "\n"
                        << "{\"type\":\"end\",\"sta";  // cut short
    int64_t malformed = 0;
    std::string note;
    const auto events = wb::proto::readEventsFile(path, &malformed, &note);
    QCOMPARE(int(events.size()), 2);
    QCOMPARE(malformed, int64_t(2));
    QCOMPARE(QString::fromStdString(note),
             QStringLiteral(R"(2 unreadable line(s) skipped; the first: line 3 skipped, a step event's "loss" is "low", )"
                            R"(not a number: {"type":"step","loss":"low"})"));
    wb::proto::EventFileReader reader(path);
    (void)reader.finish();
    QCOMPARE(int(reader.skippedLines().size()), 2);
    QCOMPARE(reader.skippedLines()[1].line, int64_t(5));
    QVERIFY(reader.skippedLines()[1].why.find("not JSON") == 0);
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

  void reopenedSinkStartsANewLineAfterATornRecord() {
    // A writer killed mid-record leaves a torn last line; the next life appends to the file.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("e.jsonl")).toStdString();
    {
      std::ofstream out(path, std::ios::binary);
      out << wb::proto::encodeEvent(wb::proto::makeEvent("start", 0, 0)) << "\n"
          << "{\"v\":1,\"type\":\"step\",\"rank\":0,\"loss\":0.5,\"sam";  // cut mid-record
    }
    wb::proto::EventSink sink;
    QVERIFY(sink.openFile(path).ok());
    auto run = wb::proto::makeEvent("run", -1, 0);
    run["run_id"] = "resumed";
    sink.write(run);
    int64_t malformed = 0;
    auto events = wb::proto::readEventsFile(path, &malformed);
    QCOMPARE(int(events.size()), 2);
    QCOMPARE(QString::fromStdString(events[1]["type"].get<std::string>()), QStringLiteral("run"));
    QCOMPARE(QString::fromStdString(events[1]["run_id"].get<std::string>()), QStringLiteral("resumed"));
    QCOMPARE(malformed, int64_t(1));  // the torn line stays one unreadable line of its own

    // A clean file gets no blank line.
    wb::proto::EventSink again;
    QVERIFY(again.openFile(path).ok());
    again.write(wb::proto::makeEvent("end", 0, 1));
    std::ifstream in(path, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QVERIFY(all.find("\n\n") == std::string::npos);
  }

  // A file size limit reached mid-run (RLIMIT_FSIZE on this process, SIGXFSZ ignored): the
  // record cut short at the limit is taken back and it and the later ones are held, written in
  // order once the limit is lifted; given up on, they are counted lost. No torn line either way.
  void sinkHoldsBackWhatTheFileRefuses() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("e.jsonl")).toStdString();
    struct sigaction ignore {}, previous {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &previous);
    rlimit was{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &was) == 0);
    auto limitTo = [&](rlim_t soft) {
      rlimit lim{soft, was.rlim_max};
      return ::setrlimit(RLIMIT_FSIZE, &lim) == 0;
    };
    wb::proto::EventSink sink;
    QVERIFY(sink.openFile(path).ok());
    sink.write(wb::proto::makeEvent("start", 0, 0));
    QVERIFY(limitTo(rlim_t(QFileInfo(QString::fromStdString(path)).size() + 20)));
    for (int i = 1; i <= 3; ++i) {
      auto step = wb::proto::makeEvent("step", 0, i);
      step["step"] = i;
      step["loss"] = 1.0 / i;
      sink.write(step);
    }
    const bool stillRefused = !sink.retryPending();
    auto held = sink.fileReport();
    QVERIFY(limitTo(was.rlim_cur));
    QVERIFY(stillRefused);
    QVERIFY(held.failed_writes >= 3);
    QCOMPARE(held.pending, int64_t(3));
    QVERIFY2(held.error.find("file size limit") != std::string::npos, held.error.c_str());
    QVERIFY(sink.retryPending());
    auto late = sink.fileReport();
    QCOMPARE(late.late, int64_t(3));
    QCOMPARE(late.pending, int64_t(0));
    QCOMPARE(late.lost, int64_t(0));
    int64_t malformed = -1;
    auto events = wb::proto::readEventsFile(path, &malformed);
    QCOMPARE(malformed, int64_t(0));
    QCOMPARE(int(events.size()), 4);
    for (int i = 1; i <= 3; ++i) QCOMPARE(wb::proto::intOr(events[size_t(i)], "step", 0), int64_t(i));

    // Given up on while refused: what was held and what comes after is lost, and counted.
    QVERIFY(limitTo(rlim_t(QFileInfo(QString::fromStdString(path)).size())));
    sink.write(wb::proto::makeEvent("eval", 0, 4));
    sink.abandonFile();
    sink.write(wb::proto::makeEvent("end", 0, 5));
    QVERIFY(limitTo(was.rlim_cur));
    ::sigaction(SIGXFSZ, &previous, nullptr);
    QCOMPARE(sink.fileReport().lost, int64_t(2));
    QCOMPARE(int(wb::proto::readEventsFile(path, &malformed).size()), 4);
    QCOMPARE(malformed, int64_t(0));
  }

  void tolerantAccessors_data() {
    QTest::addColumn<QString>("doc");
    QTest::addColumn<double>("number");
    QTest::addColumn<qlonglong>("integer");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("flag");
    const double fb = -7.5;
    QTest::newRow("values") << R"({"x":2.5,"n":3,"s":"hi","b":true})" << 2.5 << 3LL << "hi" << true;
    QTest::newRow("null (a NaN loss)") << R"({"x":null,"n":null,"s":null,"b":null})" << fb << -1LL << "fb" << false;
    QTest::newRow("missing") << R"({})" << fb << -1LL << "fb" << false;
    QTest::newRow("wrong types") << R"({"x":"1.5","n":[1],"s":4,"b":"true"})" << fb << -1LL << "fb" << false;
    QTest::newRow("not an object") << R"([1,2,3])" << fb << -1LL << "fb" << false;
    QTest::newRow("float to int") << R"({"x":7,"n":2.6})" << 7.0 << 3LL << "fb" << false;
    QTest::newRow("int overflow") << R"({"n":1e300})" << fb << -1LL << "fb" << false;
    QTest::newRow("unsigned overflow") << R"({"n":18446744073709551615})" << fb << -1LL << "fb" << false;
  }
  void tolerantAccessors() {
    QFETCH(QString, doc);
    QFETCH(double, number);
    QFETCH(qlonglong, integer);
    QFETCH(QString, text);
    QFETCH(bool, flag);
    const json j = json::parse(doc.toStdString());
    QCOMPARE(wb::proto::numberOr(j, "x", -7.5), number);
    QCOMPARE(qlonglong(wb::proto::intOr(j, "n", -1)), integer);
    QCOMPARE(QString::fromStdString(wb::proto::stringOr(j, "s", "fb")), text);
    QCOMPARE(wb::proto::boolOr(j, "b", false), flag);
    QVERIFY(wb::proto::objectOr(j, "x").is_object());
    QVERIFY(wb::proto::objectOr(j, "x").empty());
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
