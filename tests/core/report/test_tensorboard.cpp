// TensorBoard's event files (wb/report/tensorboard.h): CRC-32C against the standard check values,
// the TFRecord framing, and a hand-made run's file split into records and decoded with the
// messages compiled from core/report/proto/tfevents.proto; nothing overwritten. The test that
// reads real runs' files with an independent reader (Python's protobuf) is
// tests/app/python/test_tensorboard_export.cpp.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cstring>
#include <fstream>
#include <sstream>

#include "report_fixture.h"
#include "tfevents.pb.h"
#include "wb/report/tensorboard.h"

using fixture::FakeRun;
using nlohmann::json;
namespace tb = wb::tensorboard;

namespace {

uint64_t readLe(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(s[at + size_t(i)])) << (8 * i);
  return v;
}

// The file's records, each checked against its two CRCs; empty (and a failed check) when one is off.
std::vector<tb::Event> records(const std::string& bytes) {
  std::vector<tb::Event> out;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) return {};
    const uint64_t length = readLe(bytes, at, 8);
    if (readLe(bytes, at + 8, 4) != wb::report::maskedCrc32c(bytes.data() + at, 8)) return {};
    if (bytes.size() - at < 16 + length) return {};
    const std::string payload = bytes.substr(at + 12, length);
    if (readLe(bytes, at + 12 + length, 4) != wb::report::maskedCrc32c(payload.data(), payload.size())) return {};
    tb::Event e;
    if (!e.ParseFromString(payload)) return {};
    out.push_back(e);
    at += 16 + length;
  }
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Two epochs with workers asked for; a rank-1 step that must not show.
FakeRun twoEpochs() {
  FakeRun run;
  run.set("speedups.workers", 2);
  fixture::FakeRun::Speedups speedups;
  speedups["workers"] = {true, true, "", std::nullopt, std::nullopt};
  speedups["precision"] = {false, false, "", std::nullopt, std::nullopt};
  run.start("cpu", 4, speedups);
  run.step(1, 10, 640, 1.0, 2.0).step(1, 20, 1280, 2.0, 1.5).step(1, 20, 1280, 2.0, 9.0, {1, 0, 2, 3, 1, 0}, 100 << 20, 1);
  run.eval(1, 2.5, 0.61).epoch(1, 2.6, 2.6);
  run.step(2, 30, 1920, 3.0, 1.2).step(2, 40, 2560, 4.0, std::nan(""));
  run.eval(2, 4.5, 0.72).epoch(2, 4.6, 2.0);
  run.end("ok", 5.0);
  return run;
}

std::vector<std::pair<int64_t, float>> series(const std::vector<tb::Event>& events, const std::string& tag) {
  std::vector<std::pair<int64_t, float>> out;
  for (const auto& e : events)
    for (const auto& v : e.summary().value())
      if (v.tag() == tag) out.emplace_back(e.step(), v.simple_value());
  return out;
}

const tb::Summary::Value* find(const std::vector<tb::Event>& events, const std::string& tag) {
  for (const auto& e : events)
    for (const auto& v : e.summary().value())
      if (v.tag() == tag) return &v;
  return nullptr;
}

}  // namespace

class TestTensorBoard : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  // The check values of CRC-32C (RFC 3720, B.4) and the standard "123456789".
  void crc32cCheckValues() {
    QCOMPARE(wb::report::crc32c("123456789", 9), 0xE3069283u);
    const std::string zeros(32, '\0'), ones(32, '\xff');
    QCOMPARE(wb::report::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
    QCOMPARE(wb::report::crc32c(ones.data(), ones.size()), 0x62A8AB43u);
    const uint32_t c = 0xE3069283u;
    QCOMPARE(wb::report::maskedCrc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xA282EAD8u);
  }

  void tfRecordFraming() {
    const std::string r = wb::report::tfRecord("abc");
    QCOMPARE(r.size(), size_t(8 + 4 + 3 + 4));
    QCOMPARE(readLe(r, 0, 8), uint64_t(3));
    QCOMPARE(uint32_t(readLe(r, 8, 4)), wb::report::maskedCrc32c(r.data(), 8));
    QCOMPARE(r.substr(12, 3), std::string("abc"));
    QCOMPARE(uint32_t(readLe(r, 15, 4)), wb::report::maskedCrc32c("abc", 3));
  }

  void runDecodes() {
    const std::string run = twoEpochs().write(dir_.path(), QStringLiteral("decode"));
    int64_t scalars = 0;
    auto bytes = wb::report::tensorBoardEvents(run, &scalars);
    QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message.c_str());
    const auto events = records(*bytes);
    QVERIFY2(!events.empty(), "a record's CRC, length or message is off");
    QCOMPARE(events.front().file_version(), std::string(wb::report::kTensorBoardFileVersion));
    // Rank 0's losses per step, as float; the NaN loss left out, rank 1's 9.0 nowhere.
    const std::vector<std::pair<int64_t, float>> loss{{10, 2.0f}, {20, 1.5f}, {30, 1.2f}};
    QCOMPARE(series(events, "loss/train"), loss);
    const std::vector<std::pair<int64_t, float>> acc{{100, 0.61f}, {200, 0.72f}};
    QCOMPARE(series(events, "accuracy/val"), acc);
    QCOMPARE(series(events, "step_time_ms/bwd").size(), size_t(4));
    QCOMPARE(series(events, "memory_MiB/rss_peak").front().second, 100.0f);
    QCOMPARE(series(events, "throughput/epoch_train_samples_per_s").size(), size_t(2));
    QCOMPARE(series(events, "throughput/epoch_train_samples_per_s").front().first, int64_t(100));  // its evaluation's step
    int64_t counted = 0;
    for (const auto& e : events)
      for (const auto& v : e.summary().value()) counted += v.value_case() == tb::Summary::Value::kSimpleValue;
    QCOMPARE(scalars, counted);
    // The config as text (Markdown code block) and as hparams; the speedups named.
    const auto* config = find(events, "config");
    QVERIFY(config && config->metadata().plugin_data().plugin_name() == "text");
    QVERIFY(config->tensor().dtype() == tb::DT_STRING);
    QVERIFY(config->tensor().string_val(0).find("\"workers\": 2") != std::string::npos);
    const auto* speedups = find(events, "speedups");
    QVERIFY(speedups);
    QVERIFY2(speedups->tensor().string_val(0).rfind("Speedups asked for: workers 2\n", 0) == 0,
             speedups->tensor().string_val(0).c_str());
    const auto* start = find(events, "_hparams_/session_start_info");
    QVERIFY(start && start->metadata().plugin_data().plugin_name() == "hparams");
    tb::HParamsPluginData data;
    QVERIFY(data.ParseFromString(start->metadata().plugin_data().content()));
    QVERIFY(data.has_session_start_info());
    const auto& hp = data.session_start_info().hparams();
    QCOMPARE(hp.at("Speedups").string_value(), std::string("workers 2"));
    QVERIFY(hp.count("Loader workers"));  // the schema's label, not the key
    QCOMPARE(hp.at("Loader workers").number_value(), 2.0);
    const auto* end = find(events, "_hparams_/session_end_info");
    QVERIFY(end);
    QVERIFY(data.ParseFromString(end->metadata().plugin_data().content()));
    QCOMPARE(int(data.session_end_info().status()), int(tb::STATUS_SUCCESS));
  }

  // Runs with one folder name get their own folders; an existing export is never overwritten.
  void writesEachRunOnceAndNeverOverwrites() {
    const std::string a = twoEpochs().write(dir_.filePath(QStringLiteral("x")), QStringLiteral("same"));
    const std::string b = twoEpochs().write(dir_.filePath(QStringLiteral("y")), QStringLiteral("same"));
    const std::filesystem::path out = dir_.filePath(QStringLiteral("tb")).toStdString();
    auto written = wb::report::writeTensorBoard({a, b}, out);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    QCOMPARE(written->size(), size_t(2));
    QCOMPARE((*written)[0].name, std::string("same"));
    QCOMPARE((*written)[1].name, std::string("same-2"));
    QVERIFY((*written)[0].file.filename().string().rfind("events.out.tfevents.", 0) == 0);
    const std::string before = slurp((*written)[1].file);
    QVERIFY(!records(before).empty());

    auto again = wb::report::writeTensorBoard({a, b}, out);
    QVERIFY(!again.ok());
    QVERIFY2(again.error().message.find("already holds TensorBoard event files") != std::string::npos,
             again.error().message.c_str());
    QCOMPARE(slurp((*written)[1].file), before);
    QCOMPARE(std::distance(std::filesystem::directory_iterator(out / "same"), {}), std::ptrdiff_t(1));

    const std::string file = dir_.filePath(QStringLiteral("a-file")).toStdString();
    std::ofstream(file) << "x";
    auto onFile = wb::report::writeTensorBoard({a}, file);
    QVERIFY(!onFile.ok());
    QVERIFY2(onFile.error().message.find("is a file") != std::string::npos, onFile.error().message.c_str());
    auto notARun = wb::report::writeTensorBoard({dir_.filePath(QStringLiteral("nowhere")).toStdString()},
                                                dir_.filePath(QStringLiteral("tb2")).toStdString());
    QVERIFY(!notARun.ok());
    QVERIFY(!QFileInfo::exists(dir_.filePath(QStringLiteral("tb2"))));
  }
};

QTEST_APPLESS_MAIN(TestTensorBoard)
#include "test_tensorboard.moc"
