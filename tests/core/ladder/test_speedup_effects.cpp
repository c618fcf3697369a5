// What the window's speedup rows say and do: one speedup changed on the baseline (the set-up's
// value, else the ladder's rule for it alone), refused with the machine's reason; the ladder's
// effect per speedup (its isolated row first); the probe's line.
#include <QtTest/QtTest>

#include "wb/proto/config_json.h"
#include "wb/ladder/speedup_effects.h"

#include "../../support/probe_rows.h"

using nlohmann::json;
using namespace wb::stats;
using namespace wb::ladder;

namespace {

json cpuCaps() {
  return {{"cuda", false}, {"gpus", 0}, {"cores", 2},
          {"speedups",
           {{"workers", {{"available", true}, {"max", 64}}},
            {"pin_memory", {{"available", false}, {"note", "needs CUDA; not available on this machine"}}},
            {"devices", {{"available", true}, {"max", 2}}},
            {"precision", {{"available", true}, {"values", {{"bf16-mixed", {{"available", true}}}}}}},
            {"early_stopping", {{"available", true}}},
            {"sharding", {{"available", true}}},
            {"inference_eval", {{"available", true}}}}}};
}

QStringList sl(std::initializer_list<const char*> items) {
  QStringList out;
  for (const char* s : items) out << QString::fromUtf8(s);
  return out;
}

// The speedup fields that differ between two configs.
QStringList differences(const wb::Config& a, const wb::Config& b) {
  const json ja = wb::proto::configToJson(a)["speedups"], jb = wb::proto::configToJson(b)["speedups"];
  QStringList out;
  for (const auto& [k, v] : ja.items())
    if (jb[k] != v) out << QString::fromStdString(k);
  return out;
}

}  // namespace

class TestSpeedupEffects : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void changesOnlyThatSpeedup_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("panelSet");  // "" = the set-up has it as the baseline does
    QTest::addColumn<QStringList>("changed");
    QTest::addColumn<QString>("setting");
    QTest::newRow("workers by the ladder's rule") << "workers" << "" << sl({"workers"}) << "workers 2";
    QTest::newRow("workers as set up") << "workers" << "3" << sl({"workers"}) << "workers 3";
    QTest::newRow("precision") << "precision" << "" << sl({"precision"}) << "precision bf16-mixed";
    QTest::newRow("early stopping") << "early_stopping" << "" << sl({"early_stopping"}) << "patience 2";
    QTest::newRow("sharding brings its devices") << "sharding" << "" << sl({"devices", "sharding"})
                                                 << "sharding zero1 on 2 devices";
    QTest::newRow("inference eval") << "inference_eval" << "" << sl({"inference_eval"}) << "inference-mode eval on";
  }
  void changesOnlyThatSpeedup() {
    QFETCH(QString, key);
    QFETCH(QString, panelSet);
    QFETCH(QStringList, changed);
    QFETCH(QString, setting);
    wb::Config base = ladderBaseline(wb::Config{});
    base.data.limit_train = 500;
    wb::Config panel = base;
    panel.optim.lr = 0.5;  // not a speedup: never carried over
    if (!panelSet.isEmpty()) panel.speedups.workers = panelSet.toInt();
    auto v = withOneSpeedup(base, panel, key.toStdString(), cpuCaps());
    QVERIFY2(v.ok(), v.ok() ? "" : v.error().message.c_str());
    QCOMPARE(differences(base, *v), changed);
    QCOMPARE(v->optim.lr, base.optim.lr);
    QCOMPARE(v->data.limit_train, 500);
    QCOMPARE(QString::fromStdString(speedupSetting(*v, key.toStdString())), setting);
  }

  void refusesWhatTheMachineCannotDo() {
    const wb::Config base = ladderBaseline(wb::Config{});
    auto pin = withOneSpeedup(base, base, "pin_memory", cpuCaps());
    QVERIFY(!pin.ok());
    QVERIFY(QString::fromStdString(pin.error().message).contains(QStringLiteral("needs CUDA")));
    QVERIFY(!withOneSpeedup(base, base, "turbo", cpuCaps()).ok());
    wb::Config withEval = base;
    withEval.speedups.inference_eval = true;  // the baseline already has it
    auto same = withOneSpeedup(withEval, withEval, "inference_eval", cpuCaps());
    QVERIFY(!same.ok());
    QVERIFY(QString::fromStdString(same.error().message).contains(QStringLiteral("already runs it")));
  }

  void ladderEffectPrefersTheIsolatedRow() {
    Ladder l;
    auto row = [](const std::string& key, bool isolated, std::optional<double> target, std::optional<double> x) {
      LadderRow r;
      r.step.key = key;
      r.step.isolated = isolated;
      r.repeats = 1;
      r.target_s = target;
      r.cumulative_target = x;
      r.marginal_target = x ? std::optional<double>(*x * 0.9) : std::nullopt;
      r.val_acc = 0.841;
      return r;
    };
    LadderRow contended = row("devices", false, 10.0, 2.0);
    contended.contention = "another process used 1.0 of 2 cores";
    LadderRow skipped = row("pin_memory", false, std::nullopt, std::nullopt);
    skipped.step.skipped = true;
    skipped.step.note = "needs CUDA";
    l.rows = {row("baseline", false, 30.0, 1.0), row("workers", false, 20.0, 1.5), row("workers", true, 18.0, 1.7),
              row("precision", false, 25.0, 1.2), contended, skipped, row("early_stopping", false, std::nullopt, std::nullopt)};
    // workers alone: 3 pairs, clearly faster; precision: one pair (no interval); an older ladder.json
    // without estimates (devices) keeps its figure, unclaimed.
    l.rows[2].estimates.to_target.point = 1.7, l.rows[2].estimates.to_target.lo = 1.4, l.rows[2].estimates.to_target.hi = 2.0;
    l.rows[2].estimates.to_target.pairs = 3, l.rows[2].estimates.to_target.verdict = Verdict::Faster;
    l.rows[3].estimates.marginal_to_target.point = 1.08, l.rows[3].estimates.marginal_to_target.pairs = 1;
    const auto e = ladderEffects(l, "2026-12-01 09:00 UTC");
    QVERIFY(!e.count("baseline"));
    QCOMPARE(QString::fromStdString(e.at("workers").text), QStringLiteral("1.70× faster (95 %: 1.40-2.00×) to target alone (acc 84.1 %)"));
    QCOMPARE(*e.at("workers").speedup, 1.7);
    QCOMPARE(QString::fromStdString(e.at("precision").text),
             QStringLiteral("1.08× (one run each: not a verdict) to target as a ladder step (acc 84.1 %)"));
    QVERIFY(!e.at("precision").speedup);  // no interval: not claimed
    QVERIFY(!e.at("devices").speedup);
    QVERIFY(QString::fromStdString(e.at("devices").text).startsWith(QStringLiteral("contended")));
    QCOMPARE(QString::fromStdString(e.at("pin_memory").text), QStringLiteral("skipped: needs CUDA"));
    QCOMPARE(QString::fromStdString(e.at("early_stopping").text), QStringLiteral("did not reach the target (acc 84.1 %)"));
    QCOMPARE(e.at("workers").date, std::string("2026-12-01 09:00 UTC"));
  }

  void probeLineSaysWhatTheProbeFound() {
    // 2 workers 1.25× faster in each of 3 rounds: a speedup with its interval.
    wb::probe::ProbeResult p = wb::test::resultFor(wb::Config{}, {"h", "c", 2},
                                                   wb::test::roundsOf({{0, {1000, 1010, 990}}, {2, {1250, 1262, 1238}}}));
    SpeedupEffect e = probeEffect(p);
    const QString text = QString::fromStdString(e.text);
    QVERIFY2(text.startsWith(QStringLiteral("probe recommends 2 worker(s) (1.25× [")), qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral("] faster samples/s vs 0); the data path is not the bottleneck here")), qPrintable(text));
    QVERIFY(e.speedup && std::abs(*e.speedup - 1.25) < 0.01);
    QCOMPARE(e.date, std::string("2026-12-01 08:40 UTC"));
    // Stored before rounds were kept: the ratio, said to have no interval, and no speedup claimed.
    wb::probe::ProbeResult old = wb::test::resultFor(wb::Config{}, {"h", "c", 2}, wb::test::rowsOf({{0, 1000}, {2, 1250}}));
    e = probeEffect(old);
    QCOMPARE(QString::fromStdString(e.text), QStringLiteral("probe recommends 2 worker(s) (1.25× (no interval) samples/s vs 0); "
                                                            "the data path is not the bottleneck here"));
    QVERIFY(!e.speedup);
    p.rows[1].other_cores = 1.0;
    e = probeEffect(p);
    QVERIFY(!e.speedup);
    QVERIFY(QString::fromStdString(e.text).contains(QStringLiteral("measured under contention")));
  }

  // A try's line: its estimate with the verdict; with no counted pair, why there is no speedup.
  void tryLineSaysItsVerdictOrWhyNone() {
    json doc = {{"setting", "precision bf16-mixed"}, {"reached", true}, {"pairs", 3},
                {"estimate", {{"to_target", {{"point", 1.5}, {"lo", 1.3}, {"hi", 1.7}, {"verdict", "faster"}, {"pairs", 3}}}}}};
    SpeedupEffect e = tryEffect(doc, "2026-12-01 09:00 UTC");
    QCOMPARE(QString::fromStdString(e.text), QStringLiteral("precision bf16-mixed: 1.50× faster (95 %: 1.30-1.70×) to target, 3 pair(s)"));
    QCOMPARE(e.speedup.value_or(0), 1.5);
    doc["pairs"] = 0;
    doc["runs"] = json::array({{{"pair", 1}, {"counted", false}}});
    e = tryEffect(doc, "2026-12-01 09:00 UTC");
    QVERIFY(!e.speedup);
    QVERIFY2(QString::fromStdString(e.text).contains(QStringLiteral("every pair was measured under contention")), e.text.c_str());
  }

  // A try by parts has no pairs: its line is the composed words, the split included.
  void aTryByPartsSaysItsSplit() {
    const std::string words = "1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)";
    json doc = {{"setting", "precision bf16-mixed"}, {"method", "composed"}, {"reached", true}, {"pairs", 0}, {"words", words},
                {"estimate", {{"to_target", {{"point", 1.31}, {"lo", 1.2}, {"hi", 1.4}, {"verdict", "faster"}, {"pairs", 0}}}}}};
    SpeedupEffect e = tryEffect(doc, "2026-12-01 09:00 UTC");
    QCOMPARE(e.text, "precision bf16-mixed: " + words);
    QCOMPARE(e.speedup.value_or(0), 1.31);
    doc["estimate"]["to_target"]["verdict"] = "within noise";
    QVERIFY(!tryEffect(doc, "").speedup);
    doc.erase("words");
    doc["error"] = "the math check was stopped";
    QVERIFY2(tryEffect(doc, "").text.find("the math check was stopped") != std::string::npos, tryEffect(doc, "").text.c_str());
  }
};

QTEST_APPLESS_MAIN(TestSpeedupEffects)
#include "test_speedup_effects.moc"
