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

  void settingsInWords() {
    const wb::Config on = allOn();
    QCOMPARE(wb::findSpeedup("workers")->setting(on), std::string("workers 2"));
    QCOMPARE(wb::findSpeedup("pin_memory")->setting(on), std::string("pin memory on"));
    QCOMPARE(wb::findSpeedup("sharding")->setting(on), std::string("sharding zero1 on 2 devices"));
  }
};

QTEST_APPLESS_MAIN(TestSpeedups)
#include "test_speedups.moc"
