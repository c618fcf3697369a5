// Comparison maths on hand-made run folders: time to target (interpolated), speedups, Δ acc,
// a target never reached, a run still in progress, peak memory, the config diff.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cmath>

#include "report_fixture.h"
#include "wb/proto/flops_record.h"
#include "wb/compare/compare.h"
#include "wb/compare/mfu.h"
#include "wb/report/export.h"
#include "wb/report/report.h"
#include "wb/stats/stats.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::records;
using namespace wb::compare;
using namespace wb::report;
using namespace wb::render;
using namespace wb::stats;

namespace {
std::vector<EvalSample> evalsOf(const QList<QPointF>& points) {
  std::vector<EvalSample> out;
  int epoch = 1;
  for (const auto& p : points) {
    EvalSample e;
    e.epoch = epoch++;
    e.t = p.x();
    e.val_acc = p.y();
    out.push_back(e);
  }
  return out;
}
}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---- repeats, intervals, verdicts (error bars) ----

  void repeatGroupsGiveAnIntervalAndAVerdict() {
    // Three runs of the baseline's configuration and three of a 3x faster one, on a host whose
    // runs vary by a few per cent: the fast group is "faster" with its whole interval above 1.
    std::vector<wb::records::RunRecord> runs;
    for (double scale : {1.0, 1.04, 0.97}) {
      FakeRun r = fixture::twoEpochRun(10 * scale, 0.70, 20 * scale, 0.80, static_cast<int64_t>(640 / scale));
      r.set("seed", static_cast<int>(scale * 100));  // a repeat may have another seed
      r.end("ok", 21 * scale);
      runs.push_back(r.record("base" + std::to_string(runs.size())));
    }
    for (double scale : {1.0, 1.05, 0.98}) {
      FakeRun r = fixture::twoEpochRun(10 * scale / 3, 0.70, 20 * scale / 3, 0.80, static_cast<int64_t>(1920 / scale));
      r.set("speedups.workers", 2).set("name", "fast");
      r.end("ok", 7 * scale);
      runs.push_back(r.record("fast" + std::to_string(runs.size())));
    }
    HostNoise noise;
    noise.band = 0.10;
    noise.measured = true;
    const Comparison cmp = compareRuns(runs[0], {runs.begin() + 1, runs.end()}, std::nullopt, noise);
    QCOMPARE(cmp.groups, 2);
    QVERIFY(cmp.anyRepeats());
    QVERIFY(cmp.rows[1].repeat_of_baseline);
    QCOMPARE(cmp.rows[1].group, 0);
    QCOMPARE(cmp.rows[3].group, 1);
    QCOMPARE(cmp.rows[3].group_runs, 3);
    QVERIFY(!cmp.rows[1].showsSpeedup());  // a repeat of the baseline is noise by construction
    const SpeedupEstimate& t = cmp.rows[4].target;
    QCOMPARE(t.verdict, Verdict::Faster);
    QVERIFY2(t.lo > 1.1 && t.point > 2.5 && t.point < 3.5, qPrintable(QString::fromStdString(formatEstimate(t))));
    QCOMPARE(t.baseline_runs, 3);
    QCOMPARE(t.variant_runs, 3);
    QCOMPARE(cmp.rows[4].throughput.verdict, Verdict::Faster);

    const Table table = comparisonTable(cmp);
    auto col = [&](const char* key) {
      for (size_t i = 0; i < table.columns.size(); ++i)
        if (table.columns[i].key == key) return int(i);
      return -1;
    };
    QCOMPARE(QString::fromStdString(table.rows[4][col("verdict_target")].text), QStringLiteral("faster"));
    QVERIFY(table.rows[4][col("speedup_target")].strong);  // bold: a clear verdict
    QVERIFY(*table.rows[4][col("speedup_target_lo")].number > 1.1);
    QCOMPARE(QString::fromStdString(table.rows[1][col("verdict_target")].text),
             QStringLiteral("repeat of the baseline: within noise"));
    QVERIFY(!table.rows[1][col("speedup_target")].number.has_value());  // no multiplier for a repeat
  }

  void oneRunEachHasNoIntervalAndIsNeverBold() {
    // An A/A case: one run against one run 1.26x apart says so, never "faster".
    FakeRun base = fixture::twoEpochRun(12.6, 0.70, 25.2, 0.80, 640);
    base.end("ok", 26);
    FakeRun other = fixture::twoEpochRun(10, 0.70, 20, 0.80, 800);
    other.set("speedups.precision", "bf16-mixed").end("ok", 21);
    const Comparison cmp = compareRuns(base.record("a"), {other.record("b")}, std::nullopt);
    const ComparisonRow& row = cmp.rows[1];
    QVERIFY(row.showsSpeedup());
    QCOMPARE(row.target.verdict, Verdict::NoInterval);
    QVERIFY(std::fabs(row.target.point - 1.26) < 1e-9);
    QVERIFY(!cmp.anyRepeats());
    const Table t = comparisonTable(cmp);
    const Report rep = buildComparisonReport(base.record("a"), {other.record("b")}, std::nullopt);
    const std::string md = renderMarkdown(rep);
    QVERIFY(md.find("1 run each: no interval") != std::string::npos);
    QVERIFY(md.find("**1.26×**") == std::string::npos);
    QVERIFY(md.find("this host's run-to-run noise is not measured: each verdict rests on its own pairs' spread") !=
            std::string::npos);
    // The advisor does not call a one-pair difference a loss or a gain.
    for (const auto& a : rep.advice[1].verdicts) QVERIFY2(a.code != "slower" && a.code != "faster", a.text.c_str());
  }

  void differentDataIsNotComparable_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("value");
    QTest::addColumn<QString>("says");
    QTest::newRow("validation subset") << QStringLiteral("data.limit_val") << 500 << QStringLiteral("data.limit_val differs (0 vs 500)");
    QTest::newRow("training subset") << QStringLiteral("data.limit_train") << 2000 << QStringLiteral("data.limit_train differs (0 vs 2000)");
    QTest::newRow("image size") << QStringLiteral("data.image_size") << 32 << QStringLiteral("data.image_size differs (0 vs 32)");
  }
  void differentDataIsNotComparable() {
    QFETCH(QString, field);
    QFETCH(int, value);
    QFETCH(QString, says);
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    FakeRun other = fixture::twoEpochRun(5, 0.70, 10, 0.80, 1280);
    other.set(field.toStdString(), value).end("ok", 11);
    const Comparison cmp = compareRuns(base.record("a"), {other.record("b")}, std::nullopt);
    const ComparisonRow& row = cmp.rows[1];
    QCOMPARE(QString::fromStdString(row.not_comparable), says);
    QVERIFY(!row.showsSpeedup());
    QVERIFY(QString::fromStdString(row.noSpeedupReason()).startsWith(QStringLiteral("not comparable: ")));
    const Report rep = buildComparisonReport(base.record("a"), {other.record("b")}, std::nullopt);
    const std::string md = renderMarkdown(rep);
    QVERIFY(md.find("2.00×") == std::string::npos);  // no multiplier anywhere (× epoch, × wall, to target)
    QVERIFY(md.find(says.toStdString()) != std::string::npos);
    const json j = json::parse(renderJson(rep));
    const json& r = j["comparison"]["runs"][1];
    QVERIFY(r["speedup"]["to_target"].is_null());
    QVERIFY(r["speedup"]["wall"].is_null());
    QCOMPARE(QString::fromStdString(r["not_comparable"].get<std::string>()), says);
    QVERIFY(!r.contains("estimate"));
  }

  void unfinishedRunsGiveNoSpeedup_data() {
    QTest::addColumn<QString>("status");
    QTest::addColumn<bool>("baselineUnfinished");
    QTest::newRow("failed run") << QStringLiteral("failed") << false;
    QTest::newRow("cancelled run") << QStringLiteral("cancelled") << false;
    QTest::newRow("diverged run") << QStringLiteral("diverged") << false;
    QTest::newRow("still running") << QStringLiteral("running") << false;
    QTest::newRow("failed baseline") << QStringLiteral("failed") << true;
  }
  void unfinishedRunsGiveNoSpeedup() {
    QFETCH(QString, status);
    QFETCH(bool, baselineUnfinished);
    FakeRun done = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    done.end("ok", 21);
    FakeRun cut = fixture::twoEpochRun(5, 0.70, 10, 0.80, 1280);
    cut.set("speedups.workers", 2);
    if (status != QStringLiteral("running")) cut.end(status.toStdString(), 11);
    const RunRecord a = (baselineUnfinished ? cut : done).record("a");
    const RunRecord b = (baselineUnfinished ? done : cut).record("b");
    const Comparison cmp = compareRuns(a, {b}, 0.75);
    QVERIFY(!cmp.rows[1].unfinished.empty());
    QVERIFY(!cmp.rows[1].showsSpeedup());
    const Table t = comparisonTable(cmp);
    for (size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c].key.rfind("speedup", 0) == 0) QVERIFY2(!t.rows[1][c].number, t.rows[1][c].text.c_str());
  }

  void hostSpeedChangeIsFlagged() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21).measured("host_speed", {{"before_ms", 3.0}, {"after_ms", 3.1}});
    FakeRun run = fixture::twoEpochRun(5, 0.70, 10, 0.80, 1280);
    run.set("speedups.workers", 2).end("ok", 11).measured("host_speed", {{"before_ms", 3.0}, {"after_ms", 4.2}});
    const Comparison cmp = compareRuns(base.record("a"), {run.record("b")}, std::nullopt);
    QVERIFY(cmp.rows[0].host_changed.empty());  // 3 % is inside the check's assumed ±10 %
    const QString note = QString::fromStdString(cmp.rows[1].host_changed);
    QVERIFY2(note.contains(QStringLiteral("3.00 → 4.20 ms")) && note.contains(QStringLiteral("40 % > the check's own ±10 % assumed")),
             qPrintable(note));
    QVERIFY(!cmp.rows[1].showsSpeedup());
  }

  // The baseline run's host changed speed under it: its clean repeats still carry the group's
  // estimate (the run itself is left out of it), and only the multipliers against that run alone
  // go. Without a clean repeat, every row says the baseline's host changed.
  void aBaselineRunsHostChangeLeavesItsRepeatsToJudge_data() {
    QTest::addColumn<int>("baseRepeats");
    QTest::newRow("two clean repeats") << 2;
    QTest::newRow("no repeat") << 0;
  }
  void aBaselineRunsHostChangeLeavesItsRepeatsToJudge() {
    QFETCH(int, baseRepeats);
    std::vector<RunRecord> runs;
    for (int i = 0; i <= baseRepeats; ++i) {
      FakeRun r = fixture::twoEpochRun(10 + i * 0.2, 0.70, 20 + i * 0.3, 0.80, 640 - i * 5);
      r.end("ok", 21 + i * 0.3).measured("host_speed", {{"before_ms", 3.0}, {"after_ms", i == 0 ? 4.5 : 3.05}});
      runs.push_back(r.record("base" + std::to_string(i)));
    }
    for (int i = 0; i < 3; ++i) {
      FakeRun r = fixture::twoEpochRun(3.3 + i * 0.1, 0.70, 6.6 + i * 0.1, 0.80, 1900 - i * 20);
      r.set("speedups.workers", 2).end("ok", 7 + i * 0.1).measured("host_speed", {{"before_ms", 3.0}, {"after_ms", 3.02}});
      runs.push_back(r.record("fast" + std::to_string(i)));
    }
    const Comparison cmp = compareRuns(runs[0], {runs.begin() + 1, runs.end()}, std::nullopt);
    QVERIFY(!cmp.rows[0].host_changed.empty());
    const ComparisonRow& fast = cmp.rows.back();
    const json row = comparisonJson(cmp)["runs"].back();
    if (baseRepeats == 0) {
      QVERIFY2(fast.host_changed.rfind("the baseline: ", 0) == 0, fast.host_changed.c_str());
      QVERIFY(!fast.showsSpeedup());
      QVERIFY(!row.contains("estimate"));
      return;
    }
    QVERIFY2(fast.showsSpeedup(), fast.noSpeedupReason().c_str());
    QCOMPARE(fast.target.baseline_runs, baseRepeats);  // the changed run is not among them
    QCOMPARE(fast.target.verdict, Verdict::Faster);
    QVERIFY(row["estimate"]["to_target"]["lo"].get<double>() > 1.0);
    QVERIFY(row["speedup"]["wall"].is_null() && row["speedup"]["epoch"].is_null());  // against the changed run alone
    QVERIFY(!cmp.rows[1].showsSpeedup());  // a repeat of the baseline is never a speedup
    const Table t = comparisonTable(cmp);
    const auto said = std::find_if(t.notes.begin(), t.notes.end(), [](const std::string& n) {
      return n.find("base0 (the baseline): the host's speed changed") != std::string::npos;
    });
    QVERIFY(said != t.notes.end());
  }

  // A quiet host: runs measured at ±1.8 %, the kernel moving 2.8 % in a run. Judged
  // against the run band that withheld every speedup; against the kernel's own measured noise it
  // withholds none, and a real flip is still caught, naming the check and by how much.
  void hostSpeedCheckUsesItsOwnNoise() {
    HostNoise quiet;
    quiet.measured = true;
    quiet.band = 0.018;
    quiet.bands = {{"train_samples_per_s", 0.016}, {"host_kernel", kernelBandOfRuns({{2.746, 2.823}, {2.75, 2.74}, {2.81, 2.76},
                                                                                       {2.70, 2.75}, {2.77, 2.80}, {2.76, 2.74}})}};
    QVERIFY(quiet.hostKernelBand() > 0.028);
    QVERIFY(hostSpeedNote(HostSpeed{2.746, 2.823}, quiet).empty());
    const std::string flip = hostSpeedNote(HostSpeed{2.75, 4.12}, quiet);
    QVERIFY2(flip.find("50 % > the check's own") != std::string::npos && flip.find("measured noise") != std::string::npos,
             flip.c_str());
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21).measured("host_speed", {{"before_ms", 2.746}, {"after_ms", 2.823}});
    FakeRun run = fixture::twoEpochRun(5, 0.70, 10, 0.80, 1280);
    run.set("speedups.workers", 2).end("ok", 11).measured("host_speed", {{"before_ms", 2.75}, {"after_ms", 2.80}});
    const Comparison cmp = compareRuns(base.record("a"), {run.record("b")}, std::nullopt, quiet);
    QVERIFY2(cmp.rows[1].showsSpeedup(), cmp.rows[1].noSpeedupReason().c_str());
  }

  // bf16 reached 74.39 % where the baseline's best was 74.44 % on 10,000 validation images: the
  // fair target (best less 1 SE, 0.44 points) is reached by both; a measured seed spread wins
  // over the SE; a user's target is used as given; each says which it is.
  void fairTargetIsReachedByANumericsChange() {
    const FairTarget t = fairTarget(std::nullopt, 0.7444, 10000, std::nullopt);
    QVERIFY(std::fabs(t.spread_pp - 100 * std::sqrt(0.7444 * 0.2556 / 10000)) < 1e-9);
    QVERIFY(t.acc < 0.7439);
    QVERIFY2(t.describe().find("1 SE of 10000 validation images") != std::string::npos, t.describe().c_str());
    AccuracySpread seeds;
    seeds.sd_pp = 0.3, seeds.runs = 6;
    const FairTarget m = fairTarget(std::nullopt, 0.7444, 10000, seeds);
    QVERIFY(std::fabs(m.acc - 0.7414) < 1e-9);
    QVERIFY2(m.describe().find("seed-to-seed sd of 6 runs") != std::string::npos, m.describe().c_str());
    const FairTarget u = fairTarget(0.70, 0.7444, 10000, seeds);
    QCOMPARE(u.acc, 0.70);
    QVERIFY(u.describe().find("set by the user") != std::string::npos);
    // Through compareRuns: a variant 0.05 points below the baseline's best gets a time to target.
    auto evalsWithImages = [](FakeRun& r) {
      for (auto& ev : r.events)
        if (ev["type"] == "eval") ev["eval_samples"] = 10000;
    };
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.7444, 640);
    evalsWithImages(base);
    base.end("ok", 21);
    FakeRun bf16 = fixture::twoEpochRun(8, 0.70, 16, 0.7439, 800);
    evalsWithImages(bf16);
    bf16.set("speedups.precision", "bf16-mixed").end("ok", 17);
    const Comparison cmp = compareRuns(base.record("a"), {bf16.record("b")}, std::nullopt);
    QVERIFY(cmp.rows[1].m.time_to_target_s.has_value());
    QVERIFY(cmp.target_acc < 0.7439);
    QVERIFY(comparisonTable(cmp).title.find("less 0.44 points") != std::string::npos);
  }

  void timeToTarget_data() {
    QTest::addColumn<QList<QPointF>>("evals");  // (t, val_acc)
    QTest::addColumn<double>("target");
    QTest::addColumn<double>("expected");       // -1 = not reached
    const QList<QPointF> rising{{10, 0.70}, {20, 0.80}, {30, 0.90}};
    QTest::newRow("interpolated between evals") << rising << 0.75 << 15.0;
    QTest::newRow("exactly at an eval") << rising << 0.80 << 20.0;
    QTest::newRow("first eval already above") << rising << 0.60 << 10.0;
    QTest::newRow("never reached") << rising << 0.95 << -1.0;
    QTest::newRow("crossing, then a dip") << QList<QPointF>{{10, 0.70}, {20, 0.82}, {30, 0.78}} << 0.80 << 10.0 + 10.0 / 12.0 * 10.0;
    QTest::newRow("plateau, then a rise") << QList<QPointF>{{10, 0.70}, {20, 0.70}, {30, 0.90}} << 0.80 << 25.0;
    QTest::newRow("no evaluations") << QList<QPointF>{} << 0.5 << -1.0;
  }
  void timeToTarget() {
    QFETCH(QList<QPointF>, evals);
    QFETCH(double, target);
    QFETCH(double, expected);
    auto t = timeToAccuracy(evalsOf(evals), target);
    if (expected < 0) {
      QVERIFY(!t.has_value());
    } else {
      QVERIFY(t.has_value());
      QVERIFY2(std::fabs(*t - expected) < 1e-9, qPrintable(QString::number(*t)));
    }
  }

  void speedupsAndDeltasFromRunFolders() {
    QTemporaryDir dir;
    // Baseline: evals 70 % at t=10, 80 % at t=20; 640 samples/s after warm-up; 100 MiB.
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    // Faster run: 75 % at t=5, 85 % at t=10; twice the throughput; 150 MiB; two config changes.
    FakeRun fast = fixture::twoEpochRun(5, 0.75, 10, 0.85, 1280);
    fast.set("speedups.workers", 2).set("speedups.precision", "bf16-mixed");
    for (auto& ev : fast.events)
      if (ev["type"] == "step") ev["mem"]["rss_peak"] = 150 << 20;
    fast.end("ok", 11);
    auto b = loadRun(base.write(dir.path(), QStringLiteral("base")));
    auto f = loadRun(fast.write(dir.path(), QStringLiteral("fast")));
    QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
    QVERIFY(f.ok());
    QCOMPARE(QString::fromStdString(b->status), QStringLiteral("ok"));

    Comparison cmp = compareRuns(*b, {*b, *f}, std::nullopt);
    QCOMPARE(int(cmp.rows.size()), 2);  // the baseline passed twice is shown once
    QVERIFY(!cmp.target_user_set);
    QCOMPARE(cmp.target_acc, 0.80);     // the baseline's best
    const ComparisonRow& br = cmp.rows[0];
    const ComparisonRow& fr = cmp.rows[1];
    QVERIFY(br.is_baseline);
    QCOMPARE(*br.m.time_to_target_s, 20.0);
    QCOMPARE(*fr.m.time_to_target_s, 7.5);  // 75 % at 5 s, 85 % at 10 s: 80 % halfway
    QCOMPARE(*fr.speedup_target, 20.0 / 7.5);
    QCOMPARE(*fr.speedup_wall, 21.0 / 11.0);
    QCOMPARE(*br.m.train_samples_per_s, 640.0);   // summary.train_samples_per_s
    QCOMPARE(*fr.m.train_samples_per_s, 1280.0);
    QVERIFY(br.m.throughput_source == ThroughputSource::Summary);
    QCOMPARE(*fr.speedup_throughput, 2.0);
    QCOMPARE(*fr.speedup_epoch, 10.0 / 5.0);  // mean epoch seconds 10 vs 5
    QVERIFY(std::fabs(*fr.delta_best_pp - 5.0) < 1e-9);
    QVERIFY(std::fabs(*fr.delta_final_pp - 5.0) < 1e-9);
    QCOMPARE(*fr.mem_ratio, 1.5);
    QCOMPARE(QString::fromStdString(fr.m.peak_mem_kind), QStringLiteral("host"));
    QCOMPARE(fr.m.epochs, 2);

    QCOMPARE(int(fr.diff.size()), 2);
    QCOMPARE(QString::fromStdString(describeDiff(fr.diff)),
             QStringLiteral("Precision 32-true → bf16-mixed; Loader workers 0 → 2"));
    // A run's name is not how it differs from the baseline.
    std::vector<ConfigChange> renamed = fr.diff;
    renamed.insert(renamed.begin(), {"name", "\"fashion-mnist-lenet\"", "\"01-variant-p1\""});
    QCOMPARE(QString::fromStdString(describeDiff(renamed)),
             QStringLiteral("Precision 32-true → bf16-mixed; Loader workers 0 → 2"));
    QCOMPARE(QString::fromStdString(describeDiff({{"name", "\"a\"", "\"b\""}})), QStringLiteral("same config"));

    Table t = comparisonTable(cmp);
    QCOMPARE(int(t.rows.size()), 2);
    QCOMPARE(int(t.rows[1].size()), int(t.columns.size()));
    auto col = [&](const char* key) {
      for (size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].key == key) return int(i);
      return -1;
    };
    QCOMPARE(QString::fromStdString(t.rows[1][col("speedup_target")].text), QStringLiteral("2.67×"));
    QCOMPARE(QString::fromStdString(t.rows[1][col("delta_best_pp")].text), QStringLiteral("+5.00 pp"));
    QCOMPARE(QString::fromStdString(t.rows[1][col("best_val_acc")].text), QStringLiteral("85.00 %"));
  }

  // Training throughput: the finished run's own figure, else the step events (training-only
  // already); the older summary.samples_per_s (steps + evaluation) is never shown as it.
  void trainThroughputSource_data() {
    QTest::addColumn<int>("scenario");
    QTest::addColumn<double>("expected");
    QTest::addColumn<int>("source");
    const int summary = int(ThroughputSource::Summary), steps = int(ThroughputSource::StepEvents),
              epochs = int(ThroughputSource::EpochEvents);
    QTest::newRow("finished: summary.train_samples_per_s") << 0 << 700.0 << summary;
    QTest::newRow("older summary: samples_per_s ignored, step events") << 1 << 640.0 << steps;
    QTest::newRow("summary value null: step events") << 2 << 640.0 << steps;
    QTest::newRow("older run, epoch events only") << 3 << 500.0 << epochs;
    QTest::newRow("older run, nothing training-only") << 4 << -1.0 << int(ThroughputSource::None);
  }
  void trainThroughputSource() {
    QFETCH(int, scenario);
    QFETCH(double, expected);
    QFETCH(int, source);
    FakeRun run = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    if (scenario >= 3) {  // no step events
      run = FakeRun();
      run.start().eval(1, 10, 0.7);
      if (scenario == 3) run.epoch(1, 10, 10, 500);
    }
    run.end("ok", 21);
    if (scenario == 0) run.measured("train_samples_per_s", 700.0);
    if (scenario == 1 || scenario == 4) run.measured("train_samples_per_s", json::value_t::discarded).measured("samples_per_s", 300.0);
    if (scenario == 2) run.measured("train_samples_per_s", nullptr);
    const RunMetrics m = computeMetrics(run.record(), std::nullopt);
    QCOMPARE(int(m.throughput_source), source);
    if (expected < 0) QVERIFY(!m.train_samples_per_s);
    else QCOMPARE(*m.train_samples_per_s, expected);
  }

  // How far from the limit: GFLOP/s, % of the measured peak (or "no peak"), % of the datasheet
  // peak ("not in table" for a GPU without an entry), the compute-only step and the data path,
  // and the notes saying which peak and which convention; a run without the figures shows "–".
  void mfuColumns() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    wb::proto::FlopsFigures f;
    f.per_step = 5.8e7;
    f.achieved_gflop_per_s = 1.9;
    f.peak = wb::proto::PeakFigure{95.0, "fp32 matmul measured on this CPU (2 threads), 2026-12-01"};
    f.compute_only_step_ms = 3.0;
    f.step_ms = 4.0;
    base.measured(wb::proto::kFlopsKey, wb::proto::flopsJson(f));
    FakeRun gpu = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    gpu.end("ok", 21);
    wb::proto::FlopsFigures g = f;
    g.peak.reset();
    g.no_peak = "no peak measured on this machine: run `workbench-cli probe peak`";
    g.no_datasheet = "Tesla T4 is not in the datasheet table: no datasheet percentage";
    gpu.measured(wb::proto::kFlopsKey, wb::proto::flopsJson(g));
    FakeRun older = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    older.end("ok", 21);
    Table t = comparisonTable(compareRuns(base.record("base"), {gpu.record("gpu"), older.record("older")}, std::nullopt));
    auto col = [&](const char* key) {
      for (size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].key == key) return i;
      throw std::logic_error(key);
    };
    auto text = [&](size_t row, const char* key) { return QString::fromStdString(t.rows[row][col(key)].text); };
    QCOMPARE(*t.rows[0][col("gflop_per_s")].number, 1.9);
    QCOMPARE(text(0, "pct_of_peak"), QStringLiteral("2.00 %"));
    QCOMPARE(text(0, "compute_only_step_ms"), QStringLiteral("3.00 ms"));
    QCOMPARE(text(0, "data_path_share"), QStringLiteral("25.0 %"));
    QCOMPARE(text(0, "pct_of_datasheet"), QStringLiteral("–"));  // a CPU has none
    QCOMPARE(text(1, "pct_of_peak"), QStringLiteral("no peak"));
    QCOMPARE(text(1, "pct_of_datasheet"), QStringLiteral("not in table"));
    QCOMPARE(text(2, "gflop_per_s"), QStringLiteral("–"));
    const std::string notes = [&] {
      std::string all;
      for (const auto& n : t.notes) all += n + "\n";
      return all;
    }();
    QVERIFY2(notes.find("1 multiply-add = 2 FLOPs") != std::string::npos, notes.c_str());
    QVERIFY2(notes.find("% of peak: against fp32 matmul measured on this CPU (2 threads), 2026-12-01 (95.0 GFLOP/s)") !=
                 std::string::npos, notes.c_str());
    QVERIFY2(notes.find("Tesla T4 is not in the datasheet table") != std::string::npos, notes.c_str());
  }

  void tableNamesWhatEachFigureMeasures() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    base.measured("eval_s", 3.5).measured("time_to_first_step_s", 2.25).measured("run_wall_s", 24.0).cpu(0.1, 2, 0.98, 1);
    FakeRun older = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);  // eval events: 100 ms each
    older.end("ok", 21);
    for (const char* key : {"eval_s", "time_to_first_step_s", "run_wall_s", "train_samples_per_s"})
      older.measured(key, json::value_t::discarded);
    Table t = comparisonTable(compareRuns(base.record("base"), {older.record("older")}, std::nullopt));
    auto col = [&](const char* key) {
      for (size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].key == key) return i;
      throw std::logic_error(key);
    };
    auto text = [&](size_t row, const char* key) { return QString::fromStdString(t.rows[row][col(key)].text); };
    QCOMPARE(QString::fromStdString(t.columns[col("train_samples_per_s")].title), QStringLiteral("Train samples/s"));
    QCOMPARE(QString::fromStdString(t.columns[col("eval_s")].title), QStringLiteral("Eval s"));
    QCOMPARE(QString::fromStdString(t.columns[col("time_to_first_step_s")].title), QStringLiteral("First step s"));
    QCOMPARE(QString::fromStdString(t.columns[col("run_wall_s")].title), QStringLiteral("Run wall s"));
    QCOMPARE(text(0, "eval_s"), QStringLiteral("3.50 s"));
    QCOMPARE(text(0, "time_to_first_step_s"), QStringLiteral("2.25 s"));
    QCOMPARE(text(0, "run_wall_s"), QStringLiteral("24.0 s"));
    QCOMPARE(text(0, "used_cores"), QStringLiteral("1.0 of 1 asked"));
    QCOMPARE(text(0, "other_load_cores"), QStringLiteral("none (0.1)"));
    QCOMPARE(text(1, "eval_s"), QStringLiteral("0.20 s"));  // older run: its two eval events
    QCOMPARE(text(1, "time_to_first_step_s"), QStringLiteral("–"));
    QCOMPARE(text(1, "other_load_cores"), QStringLiteral("–"));
  }

  void contendedRowShowsNoSpeedup_data() {
    QTest::addColumn<bool>("baselineContended");
    QTest::addColumn<QString>("note");
    QTest::newRow("the run") << false << "another process used 0.9 of 2 cores";
    QTest::newRow("the baseline") << true << "the baseline: another process used 1.4 of 2 cores";
  }
  void contendedRowShowsNoSpeedup() {
    QFETCH(bool, baselineContended);
    QFETCH(QString, note);
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21).cpu(baselineContended ? 1.4 : 0.0);
    FakeRun fast = fixture::twoEpochRun(5, 0.75, 10, 0.85, 1280);
    fast.end("ok", 11).cpu(baselineContended ? 0.0 : 0.9);
    Comparison cmp = compareRuns(base.record("base"), {fast.record("fast")}, std::nullopt);
    const ComparisonRow& row = cmp.rows[1];
    QCOMPARE(QString::fromStdString(row.contended), note);
    QVERIFY(row.speedup_target.has_value());  // computed, but never shown as valid:
    Table t = comparisonTable(cmp);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (t.columns[c].unit != "x" || t.columns[c].key == "mem_ratio") continue;
      const std::string& key = t.columns[c].key;
      const bool bound = key.size() > 3 && (key.substr(key.size() - 3) == "_lo" || key.substr(key.size() - 3) == "_hi");
      QCOMPARE(QString::fromStdString(t.rows[1][c].text), bound ? QStringLiteral("–") : QStringLiteral("contended"));
      QVERIFY(!t.rows[1][c].number);
    }
    bool noted = false;
    for (const auto& n : t.notes) noted = noted || QString::fromStdString(n).contains(note);
    QVERIFY(noted);
    const Bar bar = comparisonBars(cmp).bars[1];  // a copy: comparisonBars returns by value
    QVERIFY(bar.skipped);
    QCOMPARE(QString::fromStdString(bar.annotation), QStringLiteral("contended"));
  }

  // A busy machine still answers: runs slowed alike (the same cores asked, other loads within
  // kContendedOtherCores) are compared; another footprint under that load is not.
  void runsSlowedAlikeAreCompared_data() {
    QTest::addColumn<double>("fastLoad");
    QTest::addColumn<int>("fastAsked");
    QTest::addColumn<bool>("compared");
    QTest::newRow("the same load, the same cores") << 1.1 << 1 << true;
    QTest::newRow("the load changed") << 0.5 << 1 << false;
    QTest::newRow("more cores asked of a busy machine") << 0.95 << 2 << false;
  }
  void runsSlowedAlikeAreCompared() {
    QFETCH(double, fastLoad);
    QFETCH(int, fastAsked);
    QFETCH(bool, compared);
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21).cpu(0.95);
    FakeRun fast = fixture::twoEpochRun(5, 0.75, 10, 0.85, 1280);
    fast.set("speedups.precision", "bf16-mixed").end("ok", 11).cpu(fastLoad, 2, 1.0, fastAsked);
    Comparison cmp = compareRuns(base.record("base"), {fast.record("fast")}, std::nullopt);
    const ComparisonRow& row = cmp.rows[1];
    QCOMPARE(row.contended.empty(), compared);
    QVERIFY2(row.noSpeedupReason().empty() == compared, row.noSpeedupReason().c_str());
    if (!compared) QVERIFY(QString::fromStdString(row.contended).contains(QStringLiteral("another process used")));
  }

  void runInProgressContentionFromStepEvents() {
    FakeRun live;
    live.start().step(1, 10, 640, 1, 1.0).stepCpu(0.95, 1.95).step(1, 20, 1280, 2, 1.0).stepCpu(1.0, 1.8);
    const Contention c = contentionOf(live.record());
    QVERIFY(c.contended);  // other load (1.0 + 0.8) / 2 = 0.9
    QCOMPARE(QString::fromStdString(c.note), QStringLiteral("another process used 0.9 of 2 cores"));
  }

  void targetNeverReachedSaysSo() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    FakeRun slow = fixture::twoEpochRun(10, 0.60, 20, 0.78, 640);
    slow.end("ok", 22);
    Comparison cmp = compareRuns(base.record("base"), {slow.record("slow")}, std::nullopt);
    const ComparisonRow& r = cmp.rows[1];
    QVERIFY(!r.m.time_to_target_s.has_value());
    QVERIFY(!r.speedup_target.has_value());
    QVERIFY(r.speedup_wall.has_value());  // wall time still compares
    Table t = comparisonTable(cmp);
    bool said = false;
    for (const auto& c : t.rows[1]) said = said || c.text == "not reached";
    QVERIFY(said);
    // A user-set lower target is reached by both.
    Comparison lower = compareRuns(base.record("base"), {slow.record("slow")}, 0.65);
    QVERIFY(lower.target_user_set);
    QVERIFY(lower.rows[1].m.time_to_target_s.has_value());
    QCOMPARE(*lower.rows[1].m.time_to_target_s, 10.0 + 0.05 / 0.18 * 10.0);
  }

  void runInProgressOrTruncatedLoads() {
    QTemporaryDir dir;
    FakeRun live = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);  // no end, no summary.json
    live.step(3, 999, 99999, 25, 0.1);                              // cut in half on disk
    auto r = loadRun(live.write(dir.path(), QStringLiteral("live"), /*truncate=*/true));
    QVERIFY(r.ok());
    QCOMPARE(QString::fromStdString(r->status), QStringLiteral("running"));
    QVERIFY(!r->finished);
    QCOMPARE(r->malformed_lines, int64_t(1));
    QVERIFY(!r->problems.empty());
    RunMetrics m = computeMetrics(*r, 0.9);
    QVERIFY(m.wall_partial);
    QCOMPARE(*m.wall_s, 20.0);  // the latest complete event
    QVERIFY(!m.time_to_target_s.has_value());
    Comparison cmp = compareRuns(*r, {}, 0.9);
    Table t = comparisonTable(cmp);
    bool yet = false, soFar = false;
    for (const auto& c : t.rows[0]) {
      yet = yet || c.text == "not reached yet";
      soFar = soFar || c.text.find("so far") != std::string::npos;
    }
    QVERIFY(yet);
    QVERIFY(soFar);
  }

  void loadRunErrorsNameTheFolder() {
    QTemporaryDir dir;
    auto missing = loadRun(dir.filePath(QStringLiteral("nope")).toStdString());
    QVERIFY(!missing.ok());
    QVERIFY(missing.error().message.find("nope") != std::string::npos);
    auto empty = loadRun(dir.path().toStdString());
    QVERIFY(!empty.ok());
    QVERIFY(empty.error().message.find("not a run folder") != std::string::npos);
  }

  void peakMemoryByDevice() {
    // CPU: ranks share the host, so their peaks add up.
    FakeRun cpu;
    cpu.start().step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 100 << 20, 0).step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 60 << 20, 1);
    RunMetrics m = computeMetrics(cpu.record(), std::nullopt);
    QCOMPARE(*m.peak_mem_bytes, double((100 << 20) + (60 << 20)));
    QCOMPARE(QString::fromStdString(m.peak_mem_kind), QStringLiteral("host"));
    // CUDA: each GPU has its own limit: the largest per-rank peak.
    FakeRun gpu;
    gpu.start("cuda:0").step(1, 10, 640, 1, 1.0).deviceMem(300 << 20).step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 1, 1).deviceMem(200 << 20);
    m = computeMetrics(gpu.record(), std::nullopt);
    QCOMPARE(*m.peak_mem_bytes, double(300 << 20));
    QCOMPARE(QString::fromStdString(m.peak_mem_kind), QStringLiteral("device"));
  }

  // A repeat of the baseline that was cut says so in its verdict, never "within noise": only a
  // measured repeat differs from the baseline by noise alone.
  void aCutRepeatOfTheBaselineSaysWhyNotWithinNoise() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    FakeRun cut = fixture::twoEpochRun(5, 0.70, 10, 0.80, 640);
    cut.end("cancelled", 11);
    const Comparison cmp = compareRuns(base.record("a"), {cut.record("b")}, std::nullopt);
    QVERIFY(cmp.rows[1].repeat_of_baseline);
    const Table t = comparisonTable(cmp);
    for (size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c].key.rfind("verdict", 0) == 0)
        QVERIFY2(t.rows[1][c].text.find("within noise") == std::string::npos, t.rows[1][c].text.c_str());
  }

  // A run cancelled before its first step: no figure rather than zeros.
  void aRunCancelledBeforeItsFirstStepShowsNoFigures() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21).measured("peak_mem", 100 << 20);
    FakeRun cut;
    cut.start();
    cut.set("speedups.workers", 2).end("cancelled", 1).measured("peak_mem", 0).measured("train_samples_per_s", 0.0);
    cut.measured("flops", {{"per_step", 0.186e9}, {"achieved_gflop_per_s", 0.0}});
    const Comparison cmp = compareRuns(base.record("a"), {cut.record("b")}, std::nullopt);
    const ComparisonRow& row = cmp.rows[1];
    QVERIFY(!row.m.train_samples_per_s);
    QVERIFY(!row.mem_ratio);
    QVERIFY(row.m.flops.has_value());
    for (const auto& c : mfuCells(row.m.flops)) QCOMPARE(QString::fromStdString(c.text), QStringLiteral("–"));
  }

  void fp16SkippedStepsAreTheLastCount() {
    FakeRun r;
    r.start().step(1, 10, 640, 1, 1.0).amp(65536, 3).step(1, 20, 1280, 2, 1.0).amp(32768, 5);
    RunMetrics m = computeMetrics(r.record(), std::nullopt);
    QCOMPARE(*m.skipped_steps, int64_t(5));
    QCOMPARE(*m.amp_scale, 32768.0);
  }

  void configDiffListsAddedAndRemoved() {
    json a = {{"x", 1}, {"s", {{"p", "a"}, {"gone", true}}}};
    json b = {{"x", 1}, {"s", {{"p", "b"}, {"new", 2}}}};
    auto d = configDiff(a, b);
    QCOMPARE(int(d.size()), 3);
    QCOMPARE(QString::fromStdString(describeDiff(d)),
             QStringLiteral("s.new (absent) → 2; s.p a → b; s.gone on → (absent)"));
    QCOMPARE(QString::fromStdString(describeDiff({})), QStringLiteral("same config"));
  }

  void parseTarget_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");  // -1 = error
    QTest::newRow("fraction") << "0.85" << 0.85;
    QTest::newRow("percent number") << "85" << 0.85;
    QTest::newRow("percent sign") << "85%" << 0.85;
    QTest::newRow("one") << "1" << 1.0;
    QTest::newRow("zero") << "0" << -1.0;
    QTest::newRow("too big") << "150" << -1.0;
    QTest::newRow("garbage") << "abc" << -1.0;
    QTest::newRow("trailing junk") << "0.8x" << -1.0;
  }
  void parseTarget() {
    QFETCH(QString, text);
    QFETCH(double, expected);
    auto r = parseTargetAccuracy(text.toStdString());
    if (expected < 0) {
      QVERIFY(!r.ok());
      QVERIFY(r.error().message.find(text.toStdString()) != std::string::npos);
    } else {
      QVERIFY(r.ok());
      QVERIFY(std::fabs(*r - expected) < 1e-12);
    }
  }

  // The effective lr column: optim.lr × the optim.lr_scaling factor for the run's ranks.
  void effectiveLrColumn_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("ranks");
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("lr");
    QTest::newRow("none, 2 ranks") << "none" << 2 << "0.01" << 0.01;
    QTest::newRow("linear, 1 rank") << "linear" << 1 << "0.01" << 0.01;
    QTest::newRow("linear, 2 ranks") << "linear" << 2 << "0.02 (linear ×2)" << 0.02;
    QTest::newRow("sqrt, 4 ranks") << "sqrt" << 4 << "0.02 (sqrt ×2)" << 0.02;
  }
  void effectiveLrColumn() {
    QFETCH(QString, mode);
    QFETCH(int, ranks);
    QFETCH(QString, text);
    QFETCH(double, lr);
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    FakeRun run = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    run.set("optim.lr_scaling", mode.toStdString()).set("speedups.devices", ranks).end("ok", 21);
    run.events.front()["world_size"] = ranks;
    const auto cmp = compareRuns(base.record("base"), {run.record("run")}, std::nullopt);
    Table t = comparisonTable(cmp);
    size_t c = 0;
    while (c < t.columns.size() && t.columns[c].key != "effective_lr") ++c;
    QVERIFY(c < t.columns.size());
    QCOMPARE(QString::fromStdString(t.rows[1][c].text), text);
    QCOMPARE(*t.rows[1][c].number, lr);
    QCOMPARE(QString::fromStdString(t.rows[0][c].text), QStringLiteral("0.01"));
    const json j = wb::report::comparisonJson(cmp);
    QCOMPARE(j["runs"][1]["lr"]["effective"].get<double>(), lr);
    QCOMPARE(QString::fromStdString(j["runs"][1]["lr"]["scaling"].get<std::string>()), mode);
  }
};

QTEST_APPLESS_MAIN(TestCompare)
#include "test_compare.moc"
