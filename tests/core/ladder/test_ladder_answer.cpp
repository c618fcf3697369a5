// The ladder's answer from its record alone (ladderAnswer): what was kept, by how much against the
// baseline with its interval and why; when nothing paid, each step's reason grouped ("cannot be
// faster here (at most …)", "differs by less than 2 %"), by the speedups' labels; stored in
// ladder.json and given to an older ladder.json when read; the short table within 100 columns.
#include <QtTest/QtTest>

#include <sstream>

#include "wb/ladder/ladder.h"

using namespace wb;
using namespace wb::ladder;
using wb::stats::SpeedupEstimate;
using wb::stats::Verdict;

namespace {

SpeedupEstimate estimate(double point, double lo, double hi, Verdict v) {
  SpeedupEstimate e;
  e.point = point, e.lo = lo, e.hi = hi, e.verdict = v, e.pairs = 3;
  return e;
}

LadderRow row(const std::string& key, const Config& config, const SpeedupEstimate& e, const std::string& decision) {
  LadderRow r;
  r.step.key = key;
  r.step.config = config;
  r.estimates.to_target = e;
  r.decision = decision;
  r.repeats = 1;
  r.target_s = 10;
  r.settled = "by parts";
  return r;
}

Ladder greedy(const Config& base) {
  Ladder l;
  l.greedy = true;
  l.target_acc = 0.714;
  l.rows.push_back(row("baseline", base, {}, ""));
  return l;
}

}  // namespace

class TestLadderAnswer : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void nothingPaidSaysWhyForEachStep() {
    const Config base = ladderBaseline(Config{});
    Ladder l = greedy(base);
    Config workers = base, devices = base, bf16 = base;
    workers.speedups.workers = 2;
    devices.speedups.devices = 2;
    bf16.speedups.precision = "bf16-mixed";
    l.rows.push_back(row("workers", workers, estimate(1.0, 0.99, 1.01, Verdict::WithinNoise), "dropped: no gain shown"));
    l.rows.push_back(row("devices", devices, estimate(0.40, 0.0, 0.97, Verdict::NoInterval), "dropped: no gain shown"));
    l.rows.push_back(row("precision", bf16, estimate(0.45, 0.0, 0.93, Verdict::NoInterval), "dropped: no gain shown"));
    LadderRow kept = row(kKeptStep, base, {}, "");
    kept.step.skipped = true;
    l.rows.push_back(kept);
    QCOMPARE(QString::fromStdString(ladderAnswer(l)),
             QStringLiteral("Nothing tried here made training faster: devices 2 and precision bf16-mixed cannot be faster here "
                            "(at most 0.97×); loader workers 2 differs by less than 2 %."));
  }

  void whatWasKeptIsWhatToDo() {
    const Config base = ladderBaseline(Config{});
    Ladder l = greedy(base);
    Config cl = base;
    cl.speedups.channels_last = true;
    const SpeedupEstimate faster = estimate(1.10, 1.04, 1.17, Verdict::Faster);
    l.rows.push_back(row("channels_last", cl, faster, "kept: 1.10× faster"));
    l.rows.push_back(row(kKeptStep, cl, faster, ""));
    l.answer = ladderAnswer(l);
    QCOMPARE(QString::fromStdString(l.answer),
             QStringLiteral("Turn on channels-last: 1.10× faster to 71.4 % val acc (95 %: 1.04-1.17×); it keeps the training's "
                            "math, so this is its throughput."));
    // ladder.json keeps it; one written before answers were gets it when read.
    nlohmann::json doc = ladderJson(l);
    QCOMPARE(doc["answer"].get<std::string>(), l.answer);
    doc.erase("answer");
    QCOMPARE(ladderFromJson(doc)->answer, l.answer);
    const std::string table = render::renderText(ladderAnswerTable(l), 100);
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) QVERIFY2(render::displayWidth(line) <= 100, line.c_str());
    QVERIFY2(table.find("kept: faster") != std::string::npos && table.find("channels-last") != std::string::npos, table.c_str());
  }

  void aCancelledLadderHasNoAnswerYet() {
    Ladder l = greedy(ladderBaseline(Config{}));
    l.status = "cancelled";
    l.cancelled_at = "devices";
    QVERIFY(ladderAnswer(l).rfind("No answer yet: the ladder was cancelled at step devices", 0) == 0);
  }
};

QTEST_APPLESS_MAIN(TestLadderAnswer)
#include "test_ladder_answer.moc"
