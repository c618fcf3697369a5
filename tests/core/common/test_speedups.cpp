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

// A machine with two devices, where the probe recommends 2 workers.
wb::Here twoDevices() {
  wb::Here h;
  h.cores = 4;
  h.devices = 2;
  h.workers = 2;
  h.workers_source = "the rule of thumb";
  h.mixed_precision = wb::choice::kBf16Mixed;
  return h;
}

wb::Config allOn() {
  wb::Config c = wb::speedupsOff(wb::Config{});
  for (const wb::Speedup& s : wb::speedupTable()) s.on(c, twoDevices());  // each its ladder value
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

  // Every speedup, the recipe's seven as the levers, is described whole: a ladder value here that
  // turns it on in a valid config, a field in the schema, the ladder's words, a run name, a line
  // for the hand-over, and a search kind that agrees with how it is timed.
  void everySpeedupIsDescribedWhole() {
    const wb::Here here = twoDevices();
    for (const wb::Speedup& s : wb::speedupTable()) {
      QVERIFY2(s.on && s.pytorch && s.lightning, s.key);
      const wb::Config off = wb::speedupsOff(wb::Config{});
      wb::Config c = off;
      QVERIFY2(!wb::speedupRequested(s, c), s.key);  // off in the baseline
      s.on(c, here);
      QVERIFY2(wb::speedupRequested(s, c), s.key);
      QVERIFY2(wb::validate(c).empty(), s.key);
      QVERIFY2(wb::findFieldSpec(s.config_path), s.config_path);
      QVERIFY2(!wb::stepWords(s, off, c, here).empty(), s.key);
      QVERIFY2(wb::runName(s, c) != wb::runName(s, off), s.key);
      QVERIFY2(!wb::noteHere(s, here).empty(), s.key);
      const std::string said = s.pytorch(c);
      const wb::LightningSetting l = s.lightning(c);
      QVERIFY2(!said.empty() || !l.trainer.empty() || !l.loader.empty() || !l.comment.empty(), s.key);
      QCOMPARE(s.timing == wb::Timing::Evaluation, s.search == wb::Search::Evaluation);
      QCOMPARE(s.timing == wb::Timing::Replay, s.search == wb::Search::Never);
      QCOMPARE(s.availability == wb::Availability::NeedsDevices, s.search == wb::Search::WithDevices);
      if (s.search == wb::Search::Never) QVERIFY2(std::string(s.why).size() > 0, s.key);
    }
  }

  // The ladder's value is the machine's: what the probe recommends, the devices there are, the
  // mixed precision it runs; and each says why it cannot help where the machine decides it.
  void theValueHereIsTheMachines() {
    wb::Here gpu = twoDevices();
    gpu.cuda = true;
    gpu.devices = 8;
    gpu.workers = 6;
    gpu.mixed_precision = wb::choice::kFp16Mixed;
    wb::Config c = wb::speedupsOff(wb::Config{});
    for (const char* key : {"workers", "devices", "precision"}) wb::findSpeedup(key)->on(c, gpu);
    QCOMPARE(c.speedups.workers, 6);
    QCOMPARE(c.speedups.devices, 8);
    QCOMPARE(c.speedups.precision, std::string(wb::choice::kFp16Mixed));
    wb::Here one = twoDevices();
    one.devices = 1;
    QVERIFY(!wb::findSpeedup("devices")->cannotHelp(c, one).empty());
    one.workers = 0;
    one.workers_measured = true;
    QVERIFY(!wb::findSpeedup("workers")->cannotHelp(c, one).empty());
    QVERIFY(wb::findSpeedup("workers")->cannotHelp(c, twoDevices()).empty());
    const wb::Config single = wb::speedupsOff(wb::Config{});
    QVERIFY(!wb::findSpeedup("sharding")->cannotHelp(single, twoDevices()).empty());  // needs devices > 1
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

  // Each window control's fields are schema fields of its own speedup; a field that follows
  // another takes a value of its own choices for each of the other's, and the two are one lead.
  void controlsNameTheirOwnFields() {
    int follows = 0;
    for (const wb::Speedup& s : wb::speedupTable()) {
      for (const wb::SubField& sub : s.control.more) {
        QVERIFY2(wb::findFieldSpec(sub.path), sub.path);
        QCOMPARE(wb::speedupOfField(sub.path), &s);
        QVERIFY(*sub.label);
      }
      for (const wb::Follows& f : s.control.follows) {
        ++follows;
        QCOMPARE(wb::speedupOfField(f.path), &s);
        const wb::FieldSpec* from = wb::findFieldSpec(f.from);
        const wb::FieldSpec* to = wb::findFieldSpec(f.path);
        QVERIFY(from && from->choices && to && to->choices);
        for (const wb::Choice& c : from->choices()) QVERIFY(wb::findChoice(to->choices(), f.value(c.value)));
        QCOMPARE(wb::leadField(f.path), std::string(f.from));
        QCOMPARE(wb::leadField(f.from), std::string(f.from));
      }
    }
    QCOMPARE(follows, 1);  // early stopping's mode follows its monitor
    const wb::Follows& mode = wb::findSpeedup("early_stopping")->control.follows.front();
    QCOMPARE(mode.value(wb::choice::kMonitorValAcc), std::string(wb::choice::kModeMax));
    QCOMPARE(mode.value(wb::choice::kMonitorValLoss), std::string(wb::choice::kModeMin));
    QCOMPARE(wb::leadField("speedups.early_stopping.patience"), std::string());
    QCOMPARE(wb::leadField("speedups.workers"), std::string());
  }

  // What the window waits for: sharding for a second device, nothing else for anything.
  void waitsForWhatItNeeds() {
    wb::Config one, two;
    two.speedups.devices = 2;
    for (const wb::Speedup& s : wb::speedupTable()) {
      QCOMPARE(s.control.waits != nullptr, s.availability == wb::Availability::NeedsDevices);
      if (!s.control.waits) continue;
      QVERIFY(s.control.waits(one).find("devices > 1") != std::string::npos);
      QCOMPARE(s.control.waits(two), std::string());
    }
  }

  // The window's warning under early stopping when it cannot stop the experiment, and what to set.
  void earlyStoppingWarnsWhenItCannotTrigger() {
    for (const wb::Speedup& s : wb::speedupTable())
      QCOMPARE(s.control.caveat != nullptr, std::string(s.key) == "early_stopping");
    const auto caveat = wb::findSpeedup("early_stopping")->control.caveat;
    wb::Config c;
    c.train.epochs = 1;
    c.speedups.early_stopping.patience = 2;
    QCOMPARE(caveat(c), std::string("Early stopping cannot trigger in 1 epoch(s) with patience 2: it evaluates once per "
                                    "epoch. Set Epochs above 2 for it to save time."));
    c.train.epochs = 3;
    QCOMPARE(caveat(c), std::string());
    c.train.epochs = 1;
    c.speedups.early_stopping.patience = 0;  // off
    QCOMPARE(caveat(c), std::string());
  }

  // The levers that set how many cores a run takes: the loader's threads and the processes.
  void usesCoresIsTheLoaderAndTheProcesses() {
    std::set<std::string> keys;
    for (const wb::Speedup& s : wb::speedupTable())
      if (s.uses_cores) keys.insert(s.key);
    QCOMPARE(keys, (std::set<std::string>{"devices", "workers"}));
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
