// The speedup table (wb/common/speedups.h) as the one description of each speedup: its baseline
// (off), copying its setting from one config to another, and its setting in words. Every entry
// turns off what speedupsOff turns off, copies exactly its own setting (sharding also the devices
// it needs), and says what it copied.
#include <QtTest/QtTest>

#include <set>

#include "wb/common/choices.h"
#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"

namespace {

wb::Config allOn() {
  wb::Config c;
  c.speedups.workers = 2;
  c.speedups.pin_memory = true;
  c.speedups.devices = 2;
  c.speedups.precision = wb::choice::kBf16Mixed;
  c.speedups.early_stopping.patience = 3;
  c.speedups.sharding = "zero1";
  c.speedups.inference_eval = true;
  for (const wb::Speedup& s : wb::speedupTable())  // the levers: their ladder value
    if (s.on) s.on(c);
  return c;
}

}  // namespace

class TestSpeedups : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void keysAreUniqueAndFound() {
    std::set<std::string> keys;
    for (const wb::Speedup& s : wb::speedupTable()) {
      QVERIFY2(keys.insert(s.key).second, s.key);
      QCOMPARE(wb::findSpeedup(s.key), &s);
      QVERIFY(s.off && s.copy && s.setting);
    }
    QVERIFY(!wb::findSpeedup("turbo"));
  }

  // A lever past the recipe's is described whole: a control, a ladder value that turns it on,
  // a field in the schema; the recipe's seven have controls of their own.
  void leversAreDescribedWhole() {
    int levers = 0;
    for (const wb::Speedup& s : wb::speedupTable()) {
      if (s.control == wb::Control::Own) {
        QVERIFY2(!s.on, s.key);
        continue;
      }
      ++levers;
      QVERIFY2(s.on, s.key);
      wb::Config c;
      QVERIFY2(!wb::speedupRequested(s, c), s.key);  // off by default
      s.on(c);
      QVERIFY2(wb::speedupRequested(s, c), s.key);
      QVERIFY2(wb::validate(c).empty(), s.key);
      QVERIFY2(wb::findFieldSpec(s.config_path), s.config_path);
    }
    QCOMPARE(levers, 6);
  }

  // Off is taking the baseline's setting, and changes what it turns off.
  void offIsTheBaseline() {
    const wb::Config on = allOn(), baseline = wb::speedupsOff(on);
    for (const wb::Speedup& s : wb::speedupTable()) {
      wb::Config c = on, fromBaseline = on;
      s.off(c);
      s.copy(fromBaseline, baseline);
      QCOMPARE(s.setting(c), s.setting(fromBaseline));
      QVERIFY2(s.setting(c) != s.setting(on), s.key);
    }
    QCOMPARE(wb::findSpeedup("workers")->setting(baseline), std::string("workers 0"));
    QCOMPARE(wb::findSpeedup("precision")->setting(baseline), std::string("precision 32-true"));
  }

  // Each copy carries its own setting and leaves the others as they were.
  void copyTakesExactlyItsSetting() {
    const wb::Config on = allOn(), baseline = wb::speedupsOff(on);
    for (const wb::Speedup& s : wb::speedupTable()) {
      wb::Config c = baseline;
      s.copy(c, on);
      QCOMPARE(s.setting(c), s.setting(on));
      for (const wb::Speedup& other : wb::speedupTable()) {
        if (&other == &s) continue;
        // Sharding brings the devices it needs, and its words name them.
        const std::set<std::string> pair{s.key, other.key};
        const bool needed = pair == std::set<std::string>{wb::speedup::kSharding, wb::speedup::kDevices};
        QVERIFY2(needed == (other.setting(c) != other.setting(baseline)), (std::string(s.key) + " moved " + other.key).c_str());
      }
    }
  }

  // Whether each keeps the training's math is its descriptor's, with the words why and how it is
  // checked: in one process from the first steps, by whole processes (ranks), or not by steps at
  // all (it moves where the run ends).
  void mathIsDescribed_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<bool>("keeps");
    QTest::addColumn<int>("check");
    const auto row = [](const char* key, bool keeps, wb::MathCheck check) {
      QTest::newRow(key) << QString::fromUtf8(key) << keeps << int(check);
    };
    using wb::MathCheck;
    row("workers", true, MathCheck::Steps);
    row("pin_memory", true, MathCheck::Steps);
    row("decoded_cache", true, MathCheck::Steps);
    row("channels_last", true, MathCheck::Steps);
    row("fused_optimizer", true, MathCheck::Steps);
    row("cudnn_benchmark", true, MathCheck::Steps);
    row("inference_eval", true, MathCheck::Steps);
    row("sharding", true, MathCheck::Ranks);
    row("precision", false, MathCheck::Steps);
    row("tf32", false, MathCheck::Steps);
    row("grad_accumulation", false, MathCheck::Steps);
    row("devices", false, MathCheck::Ranks);
    row("early_stopping", false, MathCheck::Stopping);
  }
  void mathIsDescribed() {
    QFETCH(QString, key);
    QFETCH(bool, keeps);
    QFETCH(int, check);
    const wb::Speedup* s = wb::findSpeedup(key.toStdString());
    QVERIFY(s);
    QCOMPARE(s->math.math == wb::Math::Keeps, keeps);
    QCOMPARE(int(s->math.check), check);
    QVERIFY(s->math.why && std::string(s->math.why).size() > 10);
    QCOMPARE(std::string(wb::mathWords(s->math.math)), std::string(keeps ? "keeps the math" : "changes the math"));
  }

  // Every descriptor is in the table above: a new one must say what it does to the math.
  void everySpeedupSaysItsMath() { QCOMPARE(int(wb::speedupTable().size()), 13); }

  void settingsInWords() {
    const wb::Config on = allOn();
    QCOMPARE(wb::findSpeedup("workers")->setting(on), std::string("workers 2"));
    QCOMPARE(wb::findSpeedup("pin_memory")->setting(on), std::string("pin memory on"));
    QCOMPARE(wb::findSpeedup("sharding")->setting(on), std::string("sharding zero1 on 2 devices"));
  }
};

QTEST_APPLESS_MAIN(TestSpeedups)
#include "test_speedups.moc"
