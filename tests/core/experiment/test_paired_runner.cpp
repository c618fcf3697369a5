// The paired runner's parts that need no training: the estimates from a variant's pairs (only
// counted pairs: both ended ok, neither contended or both slowed alike), the target the pairs are compared at, and a
// folder holding another plan's pairs refused with what differs and what to do, and one whose
// pairs.json cannot be read refused naming it. Its runs as real
// processes are tested through the CLI (tests/app/test_cli_try.cpp, test_cli_ladder_cancel.cpp).
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <array>
#include <atomic>
#include <fstream>

#include "report_fixture.h"
#include "wb/experiment/paired_runner.h"

using fixture::FakeRun;
using namespace wb::experiment;

namespace {

// A run that reached `acc` at `accT` s, ended at `wall` s; otherLoad: the machine's other load.
wb::records::RunRecord runWith(double wall, double acc, double accT, double otherLoad = 0.0, int askedCores = 1) {
  FakeRun r;
  r.start().step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}).eval(1, accT, acc).end("ok", wall);
  r.measured("train_samples_per_s", 6400 / wall).cpu(otherLoad, 2, 1.0, askedCores);
  static int n = 0;
  return r.record("r" + std::to_string(++n));
}

VariantRuns pairsOf(std::initializer_list<std::pair<double, double>> walls, double contendedLoad = 0.0) {
  VariantRuns v;
  v.arm.key = "variant";
  int n = 0;
  for (auto [a, b] : walls) {
    v.pairs.push_back({"variant", ++n, n % 2 == 0, "a", "b"});
    v.references.push_back(runWith(a, 0.8, a - 1));
    v.variants.push_back(runWith(b, 0.8, b - 1, n == 1 ? contendedLoad : 0.0));
  }
  return v;
}

// The same pairs, with the host speed check's kernel timed on every run: steady, except the variant
// of pair `flagged` (1-based), during which the host slowed by half.
VariantRuns withHostSpeed(VariantRuns v, int flagged) {
  for (size_t i = 0; i < v.pairs.size(); ++i)
    for (auto* r : {&v.references[i], &v.variants[i]}) {
      wb::proto::HostSpeedCheck h;
      h.before_ms = 3.0;
      h.after_ms = r == &v.variants[i] && int(i) + 1 == flagged ? 4.5 : 3.0;
      r->summary.host_speed = h;
    }
  return v;
}

Plan planWith(int variantWorkers) {
  Plan p;
  p.steps = 2;
  p.reference = {"baseline", "the baseline", "00-baseline", 0, wb::Config{}};
  wb::Config v;
  v.speedups.workers = variantWorkers;
  p.variants.push_back({"workers", "loader workers 0 → 2", "01-workers", 1, v});
  return p;
}

}  // namespace

// The looks of an adaptive experiment of at most 5 pairs, on a host measured at ±band.
wb::stats::Sequential floored(double band) {
  wb::stats::Sequential s;
  s.floor_band = band;
  return s;
}

class TestPairedRunner : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // A look settles its variant on a clear verdict; a question that is only "faster?" answered by a
  // slower throughput (the short trials of a larger global batch) settles on "slower" alone: a
  // faster or a within-noise one takes every pair, for the composed time to target's precision.
  void aLookSettlesOnAClearVerdict_data() {
    QTest::addColumn<int>("verdict");
    QTest::addColumn<bool>("onlySlower");
    QTest::addColumn<bool>("settles");
    using V = wb::stats::Verdict;
    QTest::newRow("faster") << int(V::Faster) << false << true;
    QTest::newRow("slower") << int(V::Slower) << false << true;
    QTest::newRow("within noise, for good") << int(V::WithinNoise) << false << true;
    QTest::newRow("no interval") << int(V::NoInterval) << false << false;
    QTest::newRow("only slower: faster") << int(V::Faster) << true << false;
    QTest::newRow("only slower: slower") << int(V::Slower) << true << true;
    QTest::newRow("only slower: within noise") << int(V::WithinNoise) << true << false;
  }
  void aLookSettlesOnAClearVerdict() {
    QFETCH(int, verdict);
    QFETCH(bool, onlySlower);
    QFETCH(bool, settles);
    wb::stats::SpeedupEstimate e;
    e.verdict = wb::stats::Verdict(verdict);
    e.point = 1.0, e.lo = 0.99, e.hi = 1.01, e.min_effect = 0.02;  // within noise: inside the threshold
    Policy p;
    p.settle_only_slower = onlySlower;
    QCOMPARE(settlesOnLook(e, p), settles);
  }

  void estimatesComeFromTheCountedPairs() {
    const VariantRuns fast = pairsOf({{31, 10}, {33, 11}, {30, 10.5}});
    QCOMPARE(fast.countedPairs(), 3);
    const PairEstimates e = estimatePairs(fast, 0.8, floored(0.15));
    QVERIFY(e.reached);
    QCOMPARE(e.to_target.pairs, 3);
    QCOMPARE(e.to_target.verdict, wb::stats::Verdict::Faster);
    QVERIFY(e.to_target.lo > 1.15);
    QCOMPARE(e.wall.verdict, wb::stats::Verdict::Faster);
    QCOMPARE(e.throughput.verdict, wb::stats::Verdict::Faster);  // samples/s: 6400 / wall
    QVERIFY(wb::stats::verdictIsClear(e.headline(true)));

    // The first pair measured under contention does not count: two pairs remain.
    const VariantRuns contended = pairsOf({{31, 3}, {33, 11}, {30, 10.5}}, 0.9);
    QCOMPARE(contended.countedPairs(), 2);
    QCOMPARE(estimatePairs(contended, 0.8, floored(0.15)).wall.pairs, 2);

    // A busy machine: runs slowed alike (the same cores asked, about the same other load) count;
    // a pair whose load changed between its runs, or whose runs ask for different cores, does not.
    auto loaded = [](std::vector<std::array<double, 2>> loads, int variantCores) {
      VariantRuns v;
      int n = 0;
      for (auto [a, b] : loads) {
        v.pairs.push_back({"variant", ++n, n % 2 == 0, "a", "b"});
        v.references.push_back(runWith(30, 0.8, 29, a));
        v.variants.push_back(runWith(10, 0.8, 9, b, variantCores));
      }
      return v;
    };
    QCOMPARE(loaded({{0.9, 1.0}, {1.0, 0.95}, {0.9, 0.9}}, 1).countedPairs(), 3);
    QCOMPARE(estimatePairs(loaded({{0.9, 1.0}, {1.0, 0.95}, {0.9, 0.9}}, 1), 0.8, floored(0.15)).to_target.verdict,
             wb::stats::Verdict::Faster);
    QCOMPARE(loaded({{0.9, 0.2}, {1.0, 0.95}, {0.0, 0.9}}, 1).countedPairs(), 1);
    QCOMPARE(loaded({{0.9, 1.0}, {1.0, 0.95}, {0.9, 0.9}}, 2).countedPairs(), 0);
    QCOMPARE(loaded({{0.0, 0.1}, {0.1, 0.0}}, 2).countedPairs(), 2);  // an idle machine: any footprint

    // One pair: a figure, no interval.
    const PairEstimates one = estimatePairs(pairsOf({{30, 10}}), 0.8, floored(0.15));
    QCOMPARE(one.to_target.verdict, wb::stats::Verdict::NoInterval);
    QVERIFY(std::isfinite(one.to_target.point));
    QVERIFY(!wb::stats::verdictIsClear(one.to_target));

    // Not reached: no time-to-target ratio, the wall time still.
    const PairEstimates high = estimatePairs(fast, 0.95, floored(0.15));
    QVERIFY(!high.reached);
    QVERIFY(!std::isfinite(high.to_target.point));
    QCOMPARE(&high.headline(true), &high.wall);
  }

  // A pair the host speed check flags is set aside: it counts (neither run was contended, and its
  // look spends its α) but the estimate does not rest on it, so it is not usable (the runner then
  // replaces it, as a contended one, up to Policy::rerun_contended).
  void aPairSetAsideIsNotUsable() {
    QTemporaryDir noise;
    qputenv("WB_NOISE_DIR", noise.path().toUtf8());  // the assumed check band, whatever this host stored
    const VariantRuns steady = withHostSpeed(pairsOf({{31, 30}, {33, 31}, {30, 29.5}}), 0);
    QCOMPARE(steady.usablePairs(), 3);
    const VariantRuns flipped = withHostSpeed(pairsOf({{31, 30}, {33, 31}, {30, 29.5}}), 2);
    QCOMPARE(flipped.countedPairs(), 3);
    QCOMPARE(flipped.usablePairs(), 2);
    const wb::stats::Sequential seq = floored(0.0);
    const PairEstimates e = estimatePairs(flipped, std::nullopt, seq);
    QCOMPARE(e.wall.set_aside, 1);
    QCOMPARE(e.wall.level, 1 - seq.at(3).alpha);  // the third look's
    qunsetenv("WB_NOISE_DIR");
  }

  void theTargetIsTheLowestBestOfTheReferenceRuns() {
    Outcome o;
    o.variants.push_back(pairsOf({{30, 10}}));
    o.variants.front().references.front() = runWith(30, 0.75, 29);
    o.variants.push_back(pairsOf({{31, 10}}));
    QCOMPARE(*referenceTarget(o, std::nullopt), 0.75);
    QCOMPARE(*referenceTarget(o, 0.5), 0.5);
  }

  // A folder holding another plan's pairs: refused before anything runs, naming the step that
  // differs and what to do. (Stopped before the first run: only the plan is written.)
  void aFolderOfAnotherPlanIsRefused() {
    QTemporaryDir dir;
    std::atomic<bool> stop{true};
    Hooks hooks;
    hooks.stop = &stop;
    hooks.log = nullptr;
    hooks.command = "workbench-cli ladder --out X";
    auto first = runPairs(planWith(2), Policy{}, dir.path().toStdString(), hooks);
    QVERIFY(first.ok());
    QVERIFY(first->cancelled);
    QCOMPARE(QString::fromStdString(first->cancelled_at), QStringLiteral("workers"));
    QVERIFY(holdsPairs(dir.path().toStdString()));
    auto same = runPairs(planWith(2), Policy{}, dir.path().toStdString(), hooks);
    QVERIFY(same.ok());  // the same plan continues
    auto other = runPairs(planWith(3), Policy{}, dir.path().toStdString(), hooks);
    QVERIFY(!other.ok());
    QCOMPARE(other.error().code, wb::Errc::InvalidConfig);
    const QString why = QString::fromStdString(other.error().message);
    QVERIFY2(why.contains(QStringLiteral("step 'workers' differs in speedups.workers")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("workbench-cli ladder --out X")) && why.contains(QStringLiteral("choose a new --out")),
             qPrintable(why));
  }

  // A pairs.json that cannot be read (cut mid-file, emptied, no record) or of another experiment's
  // plan is refused naming it and why, before anything runs, and left as it is: never taken for a
  // new folder and rebuilt over its runs.
  void aDamagedPairsRecordIsNamedAndKept_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("named");
    QTest::newRow("cut mid-file") << "cut" << "is unreadable: it is cut mid-file";
    QTest::newRow("emptied") << "" << "is unreadable: it is empty";
    QTest::newRow("not a record") << "[]" << "is unreadable: it holds a JSON array";
    QTest::newRow("another experiment's") << R"({"candidates": [], "trials": [], "command": 3})" << "holds the pairs of another plan";
  }
  void aDamagedPairsRecordIsNamedAndKept() {
    QFETCH(QString, damage);
    QFETCH(QString, named);
    QTemporaryDir dir;
    std::atomic<bool> stop{true};
    Hooks hooks;
    hooks.stop = &stop;
    hooks.log = nullptr;
    QVERIFY(runPairs(planWith(2), Policy{}, dir.path().toStdString(), hooks).ok());
    const std::filesystem::path file = dir.path().toStdString() + "/pairs.json";
    std::string bytes = damage.toStdString();
    if (damage == QLatin1String("cut")) {
      std::ifstream in(file);
      const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      bytes = whole.substr(0, whole.size() / 2);
    }
    std::ofstream(file, std::ios::trunc) << bytes;
    auto again = runPairs(planWith(2), Policy{}, dir.path().toStdString(), hooks);
    QVERIFY(!again.ok());
    QCOMPARE(int(again.error().code), int(wb::Errc::InvalidConfig));
    const QString why = QString::fromStdString(again.error().message);
    QVERIFY2(why.contains(dir.path()) && why.contains(named), qPrintable(why));  // the file, or its folder
    std::ifstream in(file);
    QCOMPARE(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), bytes);
  }
};

QTEST_APPLESS_MAIN(TestPairedRunner)
#include "test_paired_runner.moc"
