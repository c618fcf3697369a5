// A try's answer from its record alone (wb/experiment/try.h tryAnswer): what to do, by how much
// with its interval, how sure and why, by the schema's labels; no verdict where there is none (a
// cancelled try, a contended host, an interval that settles nothing says what would), and the
// short table within 100 columns.
#include <QtTest/QtTest>

#include <sstream>

#include "wb/experiment/try.h"
#include "wb/render/table.h"
#include "wb/stats/estimate_json.h"

using nlohmann::json;
using wb::proto::TryRecord;
using wb::stats::SpeedupEstimate;
using wb::stats::Verdict;

namespace {

json estimate(double point, double lo, double hi, Verdict v, int pairs = 3) {
  SpeedupEstimate e;
  e.point = point, e.lo = lo, e.hi = hi, e.verdict = v, e.pairs = pairs;
  return wb::stats::estimateJson(e);
}

// channels-last by parts: it keeps the math; the composed speedup as given.
TryRecord channelsLast(const json& toTarget) {
  TryRecord r;
  r.status = "ok";
  r.variant.config.speedups.channels_last = true;
  r.setting = "speedups.channels_last=true";
  r.method = "composed";
  r.math = {{"keeps_math", true}, {"checked", true}};
  r.target_acc = 0.714;
  r.reached = true;
  r.estimate = {{"to_target", toTarget}, {"throughput", toTarget}};
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestTryAnswer : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aClearSpeedupSaysWhatToDoByHowMuchAndWhy() {
    const TryRecord r = channelsLast(estimate(1.10, 1.04, 1.17, Verdict::Faster));
    QCOMPARE(QString::fromStdString(wb::experiment::tryAnswer(r)),
             QStringLiteral("Turn on channels-last: 1.10× faster to 71.4 % val acc (95 %: 1.04-1.17×); it keeps the training's "
                            "math, so this is its throughput."));
  }

  void pairsThatSettleNothingSayWhatWould() {
    TryRecord r;
    r.status = "ok";
    r.variant.config.optim.lr = 0.05;
    r.target_acc = 0.70;
    r.reached = true;
    r.pairs = 3;
    r.estimate = {{"to_target", estimate(1.03, 0.95, 1.12, Verdict::WithinNoise)}};
    const std::string a = wb::experiment::tryAnswer(r);
    QVERIFY2(a.rfind("Not enough evidence yet: setting learning rate to 0.05", 0) == 0 && has(a, "what would settle it: e.g. ") &&
                 has(a, "more pair"),
             a.c_str());
    r.estimate = {{"to_target", estimate(0.95, 0.03, 30.13, Verdict::WithinNoise)}};
    QVERIFY2(wb::experiment::tryAnswer(r).rfind("Too noisy to say", 0) == 0, wb::experiment::tryAnswer(r).c_str());
  }

  void noVerdictWhereThereIsNone() {
    TryRecord r = channelsLast(estimate(1.10, 1.04, 1.17, Verdict::Faster));
    r.estimate["to_target"]["verdict"] = "contended";
    QVERIFY(has(wb::experiment::tryAnswer(r), "another process used the CPU"));
    r.status = "cancelled";
    QVERIFY(wb::experiment::tryAnswer(r).rfind("No answer yet: the try was cancelled", 0) == 0);
    TryRecord aa = channelsLast(estimate(1.0, 0.99, 1.01, Verdict::WithinNoise));
    aa.variant.config = aa.baseline.config;
    aa.same_config = true;
    QVERIFY(wb::experiment::tryAnswer(aa).rfind("A/A check passed", 0) == 0);
  }

  void theRecordKeepsTheAnswerAndTheTableFits() {
    TryRecord r = channelsLast(estimate(1.10, 1.04, 1.17, Verdict::Faster));
    r.answer = wb::experiment::tryAnswer(r);
    const json doc = wb::proto::tryRecordJson(r);
    QCOMPARE(doc["answer"].get<std::string>(), r.answer);
    QCOMPARE(wb::proto::tryRecordFromJson(doc).answer, r.answer);
    std::istringstream lines(wb::render::renderText(wb::experiment::tryAnswerTable(r), 100));
    for (std::string line; std::getline(lines, line);) QVERIFY2(wb::render::displayWidth(line) <= 100, line.c_str());
    QVERIFY(has(wb::render::renderText(wb::experiment::tryAnswerTable(r), 100), "channels-last"));
  }
};

QTEST_APPLESS_MAIN(TestTryAnswer)
#include "test_try_answer.moc"
