// `workbench-cli ladder --events-stdout`: stdout is JSON Lines only, each event versioned like a
// run's (v, type, rank -1, t, wall): `ladder` (the plan and --out), one `rung_start` and one
// `rung_end` per run, a `pair_end` after each pair (baseline and step), and the `end` with the
// status and the ladder's result (what ladder.json holds). The PNG is the SVG rendered
// (librsvg), at twice its pixel size.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "wb/common/speedups.h"
#include "wb/proto/events.h"
#include "../support/machine.h"

using nlohmann::json;

namespace {

using wb::test::haveFashionMnist;

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Width and height from a PNG's IHDR chunk (big-endian, bytes 16..23); {0, 0} when not a PNG.
std::pair<int, int> pngSize(const std::string& png) {
  if (png.size() < 24 || png.rfind("\x89PNG", 0) != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    return (uint8_t(png[at]) << 24) | (uint8_t(png[at + 1]) << 16) | (uint8_t(png[at + 2]) << 8) | uint8_t(png[at + 3]);
  };
  return {int(be32(16)), int(be32(20))};
}

// The svg element's width="W" height="H".
std::pair<int, int> svgSize(const std::string& svg) {
  auto attr = [&](const char* name) {
    const size_t at = svg.find(std::string(" ") + name + "=\"");
    return at == std::string::npos ? 0 : std::atoi(svg.c_str() + at + std::strlen(name) + 3);
  };
  return {attr("width"), attr("height")};
}

}  // namespace

class TestCliLadderEvents : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void stdoutIsTheLaddersEvents() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    QStringList args{QStringLiteral("ladder"), QStringLiteral("--events-stdout"), QStringLiteral("--out"), out,
                     QStringLiteral("--steps"), QStringLiteral("workers"), QStringLiteral("--repeats"), QStringLiteral("1")};
    for (const char* kv : {"model.name=mlp", "data.limit_train=256", "data.limit_val=128", "train.epochs=1",
                           "train.log_every=2", "train.threads=1"})
      args << QStringLiteral("--set") << QString::fromLatin1(kv);
    QProcess ladder;
    ladder.setProcessChannelMode(QProcess::SeparateChannels);
    ladder.start(QStringLiteral(WB_CLI_PATH), args);
    QVERIFY(ladder.waitForFinished(300000));
    const QByteArray err = ladder.readAllStandardError();
    QVERIFY2(ladder.exitCode() == 0, err.constData());

    std::vector<json> events;
    QStringList types;
    for (const QByteArray& line : ladder.readAllStandardOutput().split('\n')) {
      if (line.isEmpty()) continue;
      auto ev = wb::proto::decodeEvent(line.toStdString());
      QVERIFY2(ev, line.constData());  // nothing but events on stdout
      QCOMPARE((*ev)["v"].get<int>(), wb::proto::kEventVersion);
      QCOMPARE((*ev)["rank"].get<int>(), -1);
      QVERIFY(ev->contains("t") && ev->contains("wall"));
      types << QString::fromStdString((*ev)["type"].get<std::string>());
      events.push_back(*ev);
    }
    // ladder, then per pair: rung_start / rung_end of each of its two runs and a pair_end; then
    // end. A pair measured under contention (CI runs tests side by side) does not count and is
    // run once more, and only then.
    QCOMPARE(types.first(), QStringLiteral("ladder"));
    QCOMPARE(types.last(), QStringLiteral("end"));
    QCOMPARE(QString::fromStdString(events[0]["out_dir"].get<std::string>()), out);
    // the baseline, each speedup of the table, then the configuration kept
    QCOMPARE(events[0]["steps"].size(), wb::speedupTable().size() + 2);
    const int pairs = int(types.count(QStringLiteral("pair_end")));
    QVERIFY(pairs == 1 || pairs == 2);
    QCOMPARE(int(types.size()), 2 + 5 * pairs);
    for (int p = 0; p < pairs; ++p) {
      const int at = 1 + 5 * p;
      QStringList keys;
      bool contended = false;
      for (int r = 0; r < 2; ++r) {
        QCOMPARE(types[at + 2 * r], QStringLiteral("rung_start"));
        QCOMPARE(types[at + 2 * r + 1], QStringLiteral("rung_end"));
        const json& start = events[size_t(at + 2 * r)];
        const json& end = events[size_t(at + 2 * r + 1)];
        QCOMPARE(end["run_dir"], start["run_dir"]);
        QCOMPARE(end["status"].get<std::string>(), std::string("ok"));
        QVERIFY(end["best_val_acc"].is_number() && end["wall_s"].is_number());
        QVERIFY(QFile::exists(QString::fromStdString(end["run_dir"].get<std::string>()) + QStringLiteral("/summary.json")));
        keys << QString::fromStdString(start["key"].get<std::string>());
        contended = contended || end.value("contended", false);
      }
      // Pair 1 runs the baseline first, pair 2 the step first.
      QCOMPARE(keys, p == 0 ? (QStringList{QStringLiteral("baseline"), QStringLiteral("workers")})
                            : (QStringList{QStringLiteral("workers"), QStringLiteral("baseline")}));
      const json& pairEnd = events[size_t(at + 4)];
      QCOMPARE(types[at + 4], QStringLiteral("pair_end"));
      QCOMPARE(pairEnd["key"].get<std::string>(), std::string("workers"));
      QCOMPARE(pairEnd["pair"].get<int>(), p + 1);
      QCOMPARE(pairEnd["counted"].get<bool>(), !contended);   // a pair counts when neither run was contended
      if (p < pairs - 1) QVERIFY(!pairEnd["counted"].get<bool>());  // and only an uncounted one is run again
      QVERIFY(pairEnd["estimate"]["wall"]["verdict"].is_string());
    }
    const json& end = events.back();
    QCOMPARE(end["status"].get<std::string>(), std::string("ok"));
    // The result is ladder.json's.
    const json file = json::parse(slurp(QDir(out).filePath(QStringLiteral("ladder.json"))));
    QCOMPARE(end["ladder"]["steps"].size(), file["ladder"]["steps"].size());
    QCOMPARE(end["ladder"]["steps"][1]["best_val_acc"], file["ladder"]["steps"][1]["best_val_acc"]);
    // The answer: the one ladder.json holds, in the end event too.
    QVERIFY(!file["ladder"]["answer"].get<std::string>().empty());
    QCOMPARE(end["answer"], file["ladder"]["answer"]);
    QCOMPARE(end["ladder"]["answer"], file["ladder"]["answer"]);
    // The answer and its table go to stderr, out of the events' way.
    const std::string answer = file["ladder"]["answer"].get<std::string>();
    const QString firstWords = QString::fromStdString(answer).section(QLatin1Char(' '), 0, 3);
    QVERIFY2(!answer.empty() && QString::fromUtf8(err).contains(firstWords), err.constData());

    const auto [w, h] = svgSize(slurp(QDir(out).filePath(QStringLiteral("ladder.svg"))));
    QVERIFY(w > 0 && h > 0);
    QCOMPARE(pngSize(slurp(QDir(out).filePath(QStringLiteral("ladder.png")))), std::make_pair(2 * w, 2 * h));
  }
};

QTEST_APPLESS_MAIN(TestCliLadderEvents)
#include "test_cli_ladder_events.moc"
