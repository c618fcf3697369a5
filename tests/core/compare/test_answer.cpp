// The answer's shared words and `compare`'s answer: how an estimate reads (only a verdict reads as
// one; an interval wider than any effect it could detect reads "too noisy to say"), a change of
// config named by the option schema's labels and never by its keys, and compare's sentence from
// hand-made run folders: a clear speedup with its interval, one run each as no verdict.
#include <QtTest/QtTest>

#include <cmath>

#include "report_fixture.h"
#include "wb/compare/answer.h"
#include "wb/report/report.h"

using fixture::FakeRun;
using namespace wb::compare;
using wb::stats::SpeedupEstimate;
using wb::stats::Verdict;

namespace {

SpeedupEstimate estimate(double point, double lo, double hi, Verdict v) {
  SpeedupEstimate e;
  e.point = point, e.lo = lo, e.hi = hi, e.verdict = v, e.pairs = 3;
  return e;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestAnswer : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void anEstimateReadsAsWhatItIs_data() {
    QTest::addColumn<double>("point");
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<int>("reading");
    QTest::addColumn<QString>("figure");
    QTest::newRow("faster") << 1.10 << 1.04 << 1.17 << int(Verdict::Faster) << int(Reading::Faster) << QString::fromUtf8("1.10× (95 %: 1.04-1.17×)");
    QTest::newRow("slower") << 0.80 << 0.70 << 0.90 << int(Verdict::Slower) << int(Reading::Slower) << QString::fromUtf8("0.80× (95 %: 0.70-0.90×)");
    QTest::newRow("the same within 2 %") << 1.00 << 0.99 << 1.01 << int(Verdict::WithinNoise) << int(Reading::Same) << QString::fromUtf8("1.00× (95 %: 0.99-1.01×)");
    QTest::newRow("not clear") << 1.03 << 0.95 << 1.12 << int(Verdict::WithinNoise) << int(Reading::Unclear) << QString::fromUtf8("1.03× (95 %: 0.95-1.12×)");
    QTest::newRow("too noisy") << 0.95 << 0.03 << 30.13 << int(Verdict::WithinNoise) << int(Reading::TooNoisy) << QString::fromUtf8("too noisy to say");
    QTest::newRow("a bound under 1") << 0.40 << 0.0 << 0.97 << int(Verdict::NoInterval) << int(Reading::CannotBeFaster) << QString::fromUtf8("at most 0.97×");
    QTest::newRow("a bound from 0 to 6") << 0.99 << 0.0 << 6.11 << int(Verdict::NoInterval) << int(Reading::TooNoisy) << QString::fromUtf8("too noisy to say");
    QTest::newRow("a slower bound") << 0.92 << 0.0 << 0.96 << int(Verdict::Slower) << int(Reading::Slower)
                                    << QString::fromUtf8("at most 0.96× (95 %)");
    QTest::newRow("a narrow bound") << 1.05 << 0.95 << 1.15 << int(Verdict::NoInterval) << int(Reading::NoVerdict)
                                    << QString::fromUtf8("1.05× (a bound, 0.95-1.15×: not a verdict)");
    QTest::newRow("one run each") << 1.26 << double(NAN) << double(NAN) << int(Verdict::NoInterval) << int(Reading::NoVerdict)
                                  << QString::fromUtf8("1.26× (one run each: not a verdict)");
  }
  void anEstimateReadsAsWhatItIs() {
    QFETCH(double, point);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(int, verdict);
    QFETCH(int, reading);
    QFETCH(QString, figure);
    const SpeedupEstimate e = estimate(point, lo, hi, Verdict(verdict));
    QCOMPARE(int(readingOf(e)), reading);
    QCOMPARE(QString::fromStdString(figureWords(e)), figure);
    // Standing alone, the figure carries its reading before its interval; one that says it
    // itself ("too noisy to say", "at most 0.97×", "not a verdict") is left as it is.
    const std::string alone = figureWithReading(e);
    const Reading r = Reading(reading);
    if (r == Reading::TooNoisy || r == Reading::CannotBeFaster || r == Reading::NoVerdict || !(lo > 0))
      QCOMPARE(QString::fromStdString(alone), figure);
    else QVERIFY2(has(alone, readingWords(r, e.min_effect)) && alone.find(readingWords(r, e.min_effect)) < alone.find(" ("), alone.c_str());
    // Only a verdict is worded as one.
    const std::string word = readingWords(readingOf(e), 0.02);
    QCOMPARE(word == "faster" || word == "slower", reading == int(Reading::Faster) || reading == int(Reading::Slower));
  }

  void aChangeIsNamedByItsLabelsNeverItsKeys() {
    const std::vector<ConfigChange> diff{{"name", "\"a\"", "\"b\""},
                                         {"speedups.channels_last", "false", "true"},
                                         {"speedups.workers", "0", "2"},
                                         {"speedups.early_stopping.patience", "0", "2"},
                                         {"optim.lr", "0.01", "0.05"}};
    const ChangeWords w = changeWords(diff);
    QCOMPARE(QString::fromStdString(w.todo), QStringLiteral("turn on channels-last, set loader workers to 2, set early stopping "
                                                            "patience to 2 and set learning rate to 0.05"));
    QVERIFY(has(w.doing, "turning on channels-last"));
    for (const std::string& words : {w.todo, w.doing, w.name}) QVERIFY2(!has(words, "speedups.") && !has(words, "optim."), words.c_str());
    // Only the speedups asked for, in their order.
    QCOMPARE(QString::fromStdString(speedupChangeWords(diff, {"workers", "channels_last"}).name),
             QStringLiteral("loader workers 2 and channels-last"));
  }

  void compareSaysTheClearSpeedupWithItsInterval() {
    std::vector<wb::records::RunRecord> runs;
    for (double scale : {1.0, 1.04, 0.97}) {
      FakeRun r = fixture::twoEpochRun(10 * scale, 0.70, 20 * scale, 0.80, static_cast<int64_t>(640 / scale));
      r.end("ok", 21 * scale);
      runs.push_back(r.record("base" + std::to_string(runs.size())));
    }
    for (double scale : {1.0, 1.05, 0.98}) {
      FakeRun r = fixture::twoEpochRun(10 * scale / 3, 0.70, 20 * scale / 3, 0.80, static_cast<int64_t>(1920 / scale));
      r.set("speedups.workers", 2).set("name", "fast");
      r.end("ok", 7 * scale);
      runs.push_back(r.record("fast" + std::to_string(runs.size())));
    }
    wb::records::HostNoise noise;
    noise.band = 0.10, noise.measured = true;
    const Comparison cmp = compareRuns(runs[0], {runs.begin() + 1, runs.end()}, std::nullopt, noise);
    const std::string answer = compareAnswer(cmp);
    QVERIFY2(has(answer, "Set loader workers to 2: ") && has(answer, "faster to ") && has(answer, "(95 %: "), answer.c_str());
    // The report carries it: every export opens with it.
    const wb::report::Report rep = wb::report::buildComparisonReport(cmp, runs[0], {runs.begin() + 1, runs.end()});
    QCOMPARE(rep.answer, answer);
    QCOMPARE(rep.data["answer"].get<std::string>(), answer);
  }

  void oneRunEachIsNotAVerdict() {
    FakeRun base = fixture::twoEpochRun(12.6, 0.70, 25.2, 0.80, 640);
    base.end("ok", 26);
    FakeRun other = fixture::twoEpochRun(10, 0.70, 20, 0.80, 800);
    other.set("speedups.precision", "bf16-mixed").end("ok", 21);
    const std::string answer = compareAnswer(compareRuns(base.record("a"), {other.record("b")}, std::nullopt));
    QVERIFY2(has(answer, "recision bf16-mixed") && has(answer, "not a verdict") && !has(answer, "faster"), answer.c_str());
  }
  // Beyond three configurations and none clearly faster, the sentence names the closest and counts
  // the rest by why they have no figure, rather than listing every one.
  void manyConfigurationsNoneFasterReadInOneSentence() {
    FakeRun base = fixture::twoEpochRun(12.6, 0.70, 25.2, 0.80, 640);
    base.end("ok", 26);
    std::vector<wb::records::RunRecord> others;
    for (int workers : {1, 2, 3, 4}) {
      FakeRun r = fixture::twoEpochRun(12.6 - workers * 0.2, 0.70, 25.2 - workers * 0.4, 0.80, 640 + workers * 10);
      r.set("speedups.workers", workers).end("ok", 26 - workers * 0.4);
      others.push_back(r.record("w" + std::to_string(workers)));
    }
    FakeRun failed = fixture::twoEpochRun(12.6, 0.70, 25.2, 0.80, 640);
    failed.set("speedups.channels_last", true).end("failed", 26);
    others.push_back(failed.record("cl"));
    const std::string answer = compareAnswer(compareRuns(base.record("a"), others, std::nullopt));
    QVERIFY2(has(answer, "None of the 5 configurations") && has(answer, "the closest, loader workers 4") &&
                 has(answer, "3 more measured") && has(answer, "1 failed") && answer.size() < 220,
             answer.c_str());
  }
};

QTEST_APPLESS_MAIN(TestAnswer)
#include "test_answer.moc"
