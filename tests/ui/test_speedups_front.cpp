// The speedups front and centre: they come first in the set-up, each row shows what it measured
// on this machine (the newest ladder under the runs root, the stored worker probe, with dates),
// and "Try vs baseline" runs `workbench-cli try` (pairs) with only that speedup changed, its result then the row's.
#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QScrollArea>
#include <QTabWidget>
#include <QTableWidget>
#include <QtTest/QtTest>

#include <cerrno>
#include <csignal>

#include "runs/run.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/probe_runner.h"
#include "setup/setup_panel.h"
#include "compare/experiment_runner.h"
#include "compare/experiment_view.h"
#include "setup/speedups_group.h"
#include "ui_test_util.h"
#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"
#include "wb/proto/rundir.h"
#include "wb/ladder/ladder.h"
#include "wb/probe/record.h"

#include "../support/machine.h"

using nlohmann::json;
using namespace wb::records;
using namespace wb::ladder;
using namespace wb::probe;

namespace {

json cpuCapabilities() {
  return {{"cuda", false}, {"gpus", 0}, {"cores", 2},
          {"speedups",
           {{"workers", {{"available", true}, {"default", 2}, {"max", 64}}},
            {"pin_memory", {{"available", false}, {"note", "needs CUDA; not available on this machine"}}},
            {"devices", {{"available", true}, {"max", 2}, {"kind", "cpu-processes"}}},
            {"precision",
             {{"available", true},
              {"values", {{"32-true", {{"available", true}}}, {"bf16-mixed", {{"available", true}}},
                          {"16-mixed", {{"available", false}, {"note", "needs CUDA"}}}}}}},
            {"early_stopping", {{"available", true}}},
            {"sharding", {{"available", true}}},
            {"inference_eval", {{"available", true}}}}}};
}

// A finished ladder: precision alone reached the target 1.5× sooner, devices did not reach it.
Ladder ladderWithResults() {
  Ladder l;
  l.target_acc = 0.8;
  auto row = [](const std::string& key, bool isolated, std::optional<double> target, std::optional<double> x) {
    LadderRow r;
    r.step.key = key;
    r.step.isolated = isolated;
    r.step.added = key;
    r.repeats = 1;
    r.reached = target ? 1 : 0;
    r.target_s = target;
    r.cumulative_target = x;
    r.marginal_target = x;
    r.val_acc = 0.84;
    return r;
  };
  l.rows = {row("baseline", false, 30.0, 1.0), row("precision", false, 25.0, 1.2), row("precision", true, 20.0, 1.5),
            row("devices", false, std::nullopt, std::nullopt)};
  auto& alone = l.rows[2].estimates.to_target;  // 3 pairs, clearly faster
  alone.point = 1.5, alone.lo = 1.3, alone.hi = 1.7, alone.pairs = 3, alone.verdict = wb::stats::Verdict::Faster;
  return l;
}

// Every speedup field of a config JSON that differs between a and b.
QStringList speedupDifferences(const json& a, const json& b) {
  QStringList out;
  for (const auto& [k, v] : a["speedups"].items())
    if (b["speedups"][k] != v) out << QString::fromStdString(k);
  return out;
}

}  // namespace

class TestSpeedupsFront : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { wb::ui::test::setUpEnvironment(); }

  void speedupsComeFirst() {
    wb::ui::SetupPanel panel;
    panel.resize(400, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* speedups = panel.speedups();
    auto* name = panel.findChild<QWidget*>(QStringLiteral("name"));
    QVERIFY(speedups && name);
    QVERIFY(speedups->mapTo(&panel, QPoint(0, 0)).y() < name->mapTo(&panel, QPoint(0, 0)).y());
    for (const QString& key : wb::ui::SpeedupsGroup::keys()) QVERIFY2(speedups->tryButton(key), qPrintable(key));
    QVERIFY(speedups->probeButton());
  }

  void rowsShowWhatWasMeasuredHere() {
    QTemporaryDir root = wb::ui::test::scratchRoot(), probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    const QString ladderDir = root.filePath(QStringLiteral("20261201-080000-ladder-ab12"));
    QVERIFY(QDir().mkpath(ladderDir));
    QVERIFY(wb::proto::writeJsonAtomic((ladderDir + QStringLiteral("/ladder.json")).toStdString(), ladderJson(ladderWithResults())).ok());

    wb::ui::SetupPanel panel;
    auto config = wb::proto::configFromJson(panel.configJson());
    QVERIFY(config.ok());
    ProbeResult p;
    p.key = probeKey(config.value(), thisMachine());
    p.measured_at = "2026-12-01T08:40:12Z";
    p.loader_batches_per_s = 1000;
    p.step_alone_ms = 20;
    p.rows = {{0, 100, 1, 1000, 1, 1, 0, {1000, 1000}}, {2, 100, 1, 1400, 1, 1, 0, {1400, 1400}}};
    p.rounds = 2;
    p.recommended = recommendWorkers(p);
    QVERIFY(saveProbe(p, probes.path().toStdString()).ok());

    panel.setRunsRoot(root.path());
    auto* s = panel.speedups();
    const QString precision = s->effectText(QStringLiteral("precision"));
    QVERIFY2(precision.contains(QStringLiteral("1.50× faster (95 %: 1.30-1.70×) to target alone")), qPrintable(precision));  // the isolated row wins
    QVERIFY2(precision.startsWith(QStringLiteral("Ladder: ")), qPrintable(precision));
    const auto* source = s->findChild<QLabel*>(QStringLiteral("speedups.measured"));
    QVERIFY(source && source->text().contains(QStringLiteral("UTC (lenet on fashion-mnist)")));
    QVERIFY(s->effectText(QStringLiteral("devices")).contains(QStringLiteral("did not reach the target")));
    const QString workers = s->effectText(QStringLiteral("workers"));
    QVERIFY2(workers.contains(QStringLiteral("Probe (2026-12-01 08:40 UTC): probe recommends 2 worker(s) (1.40× [1.40, 1.40] faster samples/s vs 0)")),
             qPrintable(workers));
    QCOMPARE(s->effectText(QStringLiteral("sharding")), QStringLiteral("Not measured on this machine yet."));
    // The probe is this experiment's: another batch size has none.
    json doc = panel.configJson();
    doc["train"]["batch_size"] = 32;
    panel.setConfigJson(doc);
    panel.refreshMeasured();
    QVERIFY(!s->effectText(QStringLiteral("workers")).contains(QStringLiteral("Probe")));
    // The capabilities carry the stored probe for the ladder's rule.
    doc["train"]["batch_size"] = 64;
    panel.setConfigJson(doc);
    panel.setCapabilities(cpuCapabilities());
    QCOMPARE(panel.capabilities()["speedups"]["workers"]["probe"]["recommended"].get<int>(), 2);
    qunsetenv("WB_PROBES_DIR");
  }

  // A probe's recommendation is offered, never applied: "Use 2 workers" sets the count on a
  // click; where the data path is not the bottleneck only fewer workers are offered (more cannot
  // help, fewer free the cores: 0 recommended with 2 set); no offer once the
  // count set is the recommended one.
  void probeIsOfferedNotApplied_data() {
    QTest::addColumn<double>("loaderBatchesPerS");  // the loader alone
    QTest::addColumn<int>("set");
    QTest::addColumn<int>("recommended");
    QTest::addColumn<bool>("offered");
    QTest::newRow("data-bound: 20 ms a batch for a 10 ms step") << 50.0 << 0 << 2 << true;
    QTest::newRow("not the bottleneck: more is not offered") << 10000.0 << 0 << 2 << false;
    QTest::newRow("not the bottleneck: fewer is offered") << 10000.0 << 2 << 0 << true;
  }
  void probeIsOfferedNotApplied() {
    QFETCH(double, loaderBatchesPerS);
    QFETCH(int, set);
    QFETCH(int, recommended);
    QFETCH(bool, offered);
    wb::ui::SetupPanel panel;
    json doc = panel.configJson();
    doc["speedups"]["workers"] = set;
    panel.setConfigJson(doc);
    ProbeResult probe;
    probe.cores = 2;
    probe.loader_batches_per_s = loaderBatchesPerS;
    probe.step_alone_ms = 10;
    probe.rows = {{0, 100, 1.0, 1000, 9.0, 10.0}, {2, 100, 1.0, 1500, 0.5, 10.0}};
    probe.recommended = recommended;
    wb::ui::SpeedupsGroup* s = panel.speedups();
    s->offerProbe(probe);
    QCOMPARE(panel.configJson()["speedups"]["workers"].get<int>(), set);
    QPushButton* use = s->useProbeButton();
    QCOMPARE(!use->isHidden(), offered);
    if (!offered) return;
    QCOMPARE(use->text(), recommended == 1 ? QStringLiteral("Use 1 worker") : QStringLiteral("Use %1 workers").arg(recommended));
    QTest::mouseClick(use, Qt::LeftButton);
    QCOMPARE(panel.configJson()["speedups"]["workers"].get<int>(), recommended);
    QVERIFY(use->isHidden());
  }

  void probeButtonRunsTheProbeAndOffersItsCount() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    wb::ui::SetupPanel panel;
    json doc = panel.configJson();
    doc["data"]["limit_train"] = 256;
    doc["train"]["batch_size"] = 32;
    doc["speedups"]["workers"] = 7;
    panel.setConfigJson(doc);
    panel.setProbeSeconds(0.3);
    QSignalSpy finished(&panel, &wb::ui::SetupPanel::probeFinished);
    QTest::mouseClick(panel.speedups()->probeButton(), Qt::LeftButton);
    QVERIFY(panel.isProbing());  // one probe at a time: the button now cancels it
    QCOMPARE(panel.speedups()->probeButton()->text(), QStringLiteral("Cancel"));
    QVERIFY(finished.wait(180000));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    // The child stored its result for this experiment; the toggle took its recommendation.
    auto config = wb::proto::configFromJson(panel.configJson());
    QVERIFY(config.ok());
    auto stored = loadProbe(config.value(), thisMachine(), probes.path().toStdString());
    QVERIFY(stored);
    // Nothing changed without asking: the recommendation is offered as a button.
    QCOMPARE(panel.configJson()["speedups"]["workers"].get<int>(), 7);
    QVERIFY(panel.speedups()->probeButton()->isEnabled());
    QVERIFY(panel.speedups()->effectText(QStringLiteral("workers")).contains(QStringLiteral("probe recommends")));
    QPushButton* use = panel.speedups()->useProbeButton();
    const bool offered = stored->recommended != 7 && (!stored->dataNotBottleneck() || stored->recommended < 7) && !stored->contended();
    QCOMPARE(!use->isHidden(), offered);
    if (offered) {
      QTest::mouseClick(use, Qt::LeftButton);
      QCOMPARE(panel.configJson()["speedups"]["workers"].get<int>(), stored->recommended);
      QVERIFY(use->isHidden());
    }
    qunsetenv("WB_PROBES_DIR");
  }

  // Cancel while a real probe runs (30 s per candidate: minutes if left alone): its process
  // group is gone, the button is Probe again, and the probe stored before it is byte for byte
  // what it was (nothing else is written beside it).
  void probeButtonCancelsARunningProbe() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    wb::ui::SetupPanel panel;
    json doc = panel.configJson();
    doc["data"]["limit_train"] = 2000;
    doc["speedups"]["workers"] = 3;
    panel.setConfigJson(doc);
    auto config = wb::proto::configFromJson(panel.configJson());
    QVERIFY(config.ok());
    // An earlier probe of this experiment on this machine, stored.
    ProbeResult earlier;
    earlier.key = probeKey(config.value(), thisMachine());
    earlier.measured_at = "2026-11-30T10:00:00Z";
    earlier.rows = {{0, 100, 1.0, 1000, 1.0, 9.0}, {2, 100, 1.0, 1500, 0.1, 9.0}};
    earlier.recommended = 2;
    QVERIFY(saveProbe(earlier, probes.path().toStdString()).ok());
    const QString stored = probes.filePath(QString::fromStdString(earlier.key) + QStringLiteral(".json"));
    QFile before(stored);
    QVERIFY(before.open(QIODevice::ReadOnly));
    const QByteArray bytes = before.readAll();
    before.close();

    panel.setProbeSeconds(30);
    QSignalSpy finished(&panel, &wb::ui::SetupPanel::probeFinished);
    QSignalSpy progress(panel.probeRunner(), &wb::ui::ProbeRunner::progress);
    QPushButton* button = panel.speedups()->probeButton();
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(panel.isProbing());
    // Cancel once it is measuring (it said so on stderr).
    QTRY_VERIFY_WITH_TIMEOUT(progress.size() > 0 || !panel.isProbing(), 60000);
    const qint64 pid = panel.probeRunner()->processId();
    QVERIFY2(pid > 0 && panel.isProbing(), "the probe ended before it could be cancelled");
    QCOMPARE(button->text(), QStringLiteral("Cancel"));
    QVERIFY(button->isEnabled());
    wb::ui::test::grabIfAsked(panel, QStringLiteral("setup-probe-running"), QSize(450, 500));
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().at(0).toBool(), false);
    QVERIFY2(finished.first().at(1).toString().contains(QStringLiteral("cancelled")), qPrintable(finished.first().at(1).toString()));
    // The process and its whole group are gone.
    errno = 0;
    QCOMPARE(::kill(static_cast<pid_t>(pid), 0), -1);
    QCOMPARE(errno, ESRCH);
    errno = 0;
    QCOMPARE(::kill(-static_cast<pid_t>(pid), 0), -1);
    QCOMPARE(errno, ESRCH);
    // Idle again; the earlier probe untouched and still shown.
    QVERIFY(!panel.isProbing());
    QCOMPARE(button->text(), QStringLiteral("Probe"));
    QVERIFY(button->isEnabled());
    QFile after(stored);
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), bytes);
    QCOMPARE(QDir(probes.path()).entryList(QDir::Files), QStringList{QFileInfo(stored).fileName()});
    QCOMPARE(panel.configJson()["speedups"]["workers"].get<int>(), 3);  // a cancelled probe sets nothing
    QVERIFY2(panel.speedups()->effectText(QStringLiteral("workers")).contains(QStringLiteral("2026-11-30")),
             qPrintable(panel.speedups()->effectText(QStringLiteral("workers"))));
    qunsetenv("WB_PROBES_DIR");
  }

  // Try vs baseline runs `workbench-cli try` with the baseline's config and the same with only
  // that speedup changed; one try at a time; what the machine cannot do is refused.
  // The levers past the recipe's: each a row whose control is built from its descriptor (a check
  // box, a spin box with the schema's range, a combo box of the field's choices), read from and
  // written to its field; one this machine cannot do (CUDA only) is disabled with the reason and
  // written as off.
  void leversHaveControlsFromTheirDescriptor() {
    wb::ui::SetupPanel panel;
    auto* s = panel.speedups();
    int levers = 0;
    // The recipe's seven have controls of their own (the workers' probe, early stopping's More...);
    // every other speedup gets the control its field's schema asks for.
    const QStringList own{QStringLiteral("workers"), QStringLiteral("pin_memory"), QStringLiteral("devices"),
                          QStringLiteral("precision"), QStringLiteral("early_stopping"), QStringLiteral("sharding"),
                          QStringLiteral("inference_eval")};
    for (const wb::Speedup& lever : wb::speedupTable()) {
      if (own.contains(QString::fromUtf8(lever.key))) continue;
      ++levers;
      auto* w = s->findChild<QWidget*>(QString::fromUtf8(lever.config_path));
      QVERIFY2(w, lever.key);
      QVERIFY2(s->tryButton(QString::fromUtf8(lever.key)), lever.key);
      const wb::FieldSpec* spec = wb::findFieldSpec(lever.config_path);
      QVERIFY2(spec, lever.key);
      if (spec->choices) {
        auto* combo = qobject_cast<QComboBox*>(w);
        QVERIFY2(combo, lever.key);
        QCOMPARE(size_t(combo->count()), spec->choices().size());
      } else if (spec->number) {
        auto* spin = qobject_cast<QSpinBox*>(w);
        QVERIFY2(spin, lever.key);
        QCOMPARE(double(spin->minimum()), spec->range.min);
        QCOMPARE(double(spin->maximum()), spec->range.max);
      } else {
        QVERIFY2(qobject_cast<QCheckBox*>(w), lever.key);
      }
    }
    QCOMPARE(levers, 6);

    json doc = wb::ui::test::smallExperiment("levers");
    doc["speedups"]["channels_last"] = true;
    doc["speedups"]["grad_accumulation"] = 3;
    doc["speedups"]["decoded_cache"] = "disk";
    doc["speedups"]["fused_optimizer"] = true;
    doc["speedups"]["tf32"] = true;
    panel.setConfigJson(doc);
    json caps = cpuCapabilities();
    for (const wb::Speedup& lever : wb::speedupTable())
      if (lever.availability == wb::Availability::NeedsCuda && !caps["speedups"].contains(lever.key))
        caps["speedups"][lever.key] = {{"available", false}, {"note", wb::withoutWhatItNeeds(lever)}};
    panel.setCapabilities(caps);
    const json out = panel.configJson();
    QCOMPARE(out["speedups"]["channels_last"], json(true));
    QCOMPARE(out["speedups"]["grad_accumulation"], json(3));
    QCOMPARE(out["speedups"]["decoded_cache"], json("disk"));
    QCOMPARE(out["speedups"]["fused_optimizer"], json(true));
    QCOMPARE(out["speedups"]["tf32"], json(false));  // not on this machine: written as off
    QVERIFY(!s->findChild<QWidget*>(QStringLiteral("speedups.tf32"))->isEnabled());
    QVERIFY2(s->availabilityText(QStringLiteral("tf32")).contains(QStringLiteral("needs CUDA")),
             qPrintable(s->availabilityText(QStringLiteral("tf32"))));
  }

  void tryAgainstBaselineChangesOnlyThatSpeedup() {
    QTemporaryDir root = wb::ui::test::scratchRoot(), probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    wb::ui::MainWindow w(wb::ui::test::windowOptions(root));
    json doc = wb::ui::test::smallExperiment("try");
    doc["speedups"]["inference_eval"] = true;
    w.setup()->setConfigJson(doc);
    w.setup()->setCapabilities(cpuCapabilities());
    QVERIFY(!w.runs()->baseline());

    // No baseline run: the set-up with every speedup off is the baseline.
    QVERIFY(w.trySpeedup(QStringLiteral("precision")));
    const QStringList args = w.tryRunner()->arguments();
    QCOMPARE(args.mid(0, 2), (QStringList{QStringLiteral("try"), QStringLiteral("--events-stdout")}));
    // The verdicts' threshold the window uses (the Compare tab's Effect ≥) goes with it.
    QCOMPARE(args.value(args.indexOf(QStringLiteral("--min-effect")) + 1).toDouble(), w.runs()->minEffect());
    auto fileAfter = [&](const char* option) {
      return wb::proto::readJsonFile(args.at(args.indexOf(QString::fromLatin1(option)) + 1).toStdString());
    };
    const auto base = fileAfter("--config"), variant = fileAfter("--variant-config");
    QVERIFY(base.ok() && variant.ok());
    QCOMPARE((*base)["speedups"]["precision"].get<std::string>(), std::string("32-true"));
    QCOMPARE((*base)["speedups"]["inference_eval"].get<bool>(), false);
    QCOMPARE(speedupDifferences(*base, *variant), QStringList{QStringLiteral("precision")});
    QCOMPARE((*variant)["speedups"]["precision"].get<std::string>(), std::string("bf16-mixed"));
    QCOMPARE((*base)["data"], (*variant)["data"]);
    QCOMPARE(args.at(args.indexOf(QStringLiteral("--speedup")) + 1), QStringLiteral("precision"));
    QVERIFY(!w.trySpeedup(QStringLiteral("workers")));  // one try at a time
    w.tryRunner()->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!w.tryRunner()->isRunning(), 120000);

    // What the machine cannot do is refused with the reason.
    QVERIFY(!w.trySpeedup(QStringLiteral("pin_memory")));
    qunsetenv("WB_PROBES_DIR");
  }

  // A finished try: the status bar gives the estimate with its interval and verdict, and the
  // speedup's row says what it measured (no longer "Not measured on this machine yet").
  void aFinishedTryIsTheRowsMeasuredEffect() {
    QTemporaryDir root = wb::ui::test::scratchRoot(), probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    wb::ui::MainWindow w(wb::ui::test::windowOptions(root));
    json doc = wb::ui::test::smallExperiment("try-effect");
    doc["data"]["limit_train"] = 256, doc["data"]["limit_val"] = 256, doc["train"]["threads"] = 1;
    w.setup()->setConfigJson(doc);
    w.setup()->setCapabilities(cpuCapabilities());
    QCOMPARE(w.setup()->speedups()->effectText(QStringLiteral("inference_eval")), QStringLiteral("Not measured on this machine yet."));
    QSignalSpy done(w.tryRunner(), &wb::ui::ExperimentRunner::finished);
    QVERIFY(w.trySpeedup(QStringLiteral("inference_eval")));
    QVERIFY(done.wait(280000));
    QCOMPARE(done.first().at(2).toString(), QString());  // no error
    const QString effect = w.setup()->speedups()->effectText(QStringLiteral("inference_eval"));
    QVERIFY2(effect.startsWith(QStringLiteral("Try (")), qPrintable(effect));
    // A verdict, or (CI's load) why there is none. By parts (the default) the composed words; as
    // pairs with none counted, the contention.
    const json result = w.tryRunner()->result();
    if (result.value("method", std::string()) != "composed" && result["pairs"].get<int>() == 0)
      QVERIFY2(effect.contains(QStringLiteral("no speedup taken (every pair was measured under contention")), qPrintable(effect));
    else
      QVERIFY2(effect.contains(QStringLiteral("faster")) || effect.contains(QStringLiteral("slower")) ||
                   effect.contains(QStringLiteral("within noise")) || effect.contains(QStringLiteral("no verdict")) ||
                   effect.contains(QStringLiteral("no interval")),
               qPrintable(effect));
    qunsetenv("WB_PROBES_DIR");
  }

  // A try is an experiment in the window: its row and the Experiments tab say what it measures
  // now (its phase, from its events) and for how long; the runs of its measurements (by parts:
  // more devices' short trials, whole processes) stay out of the runs list; its button cancels it;
  // Stop all does too; a cancel keeps what was measured (the math check, the finished trials),
  // try.json says cancelled, the row says cancelled, and the same try continues from them.
  void aRunningTryIsShownAndCancelKeepsWhatItMeasured() {
    QTemporaryDir root = wb::ui::test::scratchRoot(), probes;
    qputenv("WB_PROBES_DIR", probes.path().toUtf8());
    wb::ui::MainWindow w(wb::ui::test::windowOptions(root));
    json doc = wb::ui::test::smallExperiment("try-cancel");
    doc["data"]["limit_train"] = 256, doc["data"]["limit_val"] = 256, doc["train"]["threads"] = 1;
    w.setup()->setConfigJson(doc);
    w.setup()->setCapabilities(cpuCapabilities());
    auto* s = w.setup()->speedups();
    const QString key = QStringLiteral("devices");
    QVERIFY(w.trySpeedup(key));
    QCOMPARE(s->tryButton(key)->text(), QStringLiteral("Cancel try"));
    QVERIFY(s->tryButton(key)->isEnabled());
    QVERIFY(!s->tryButton(QStringLiteral("precision"))->isEnabled());  // one try at a time
    QVERIFY(w.stopAction()->isEnabled());
    QVERIFY2(s->effectText(key).startsWith(QStringLiteral("Trying")), qPrintable(s->effectText(key)));
    // The trials' phase, from the try's events: in the row, with the time so far.
    QTRY_VERIFY_WITH_TIMEOUT(w.tryRunner()->phase().contains(QStringLiteral("training throughput")), 120000);
    QVERIFY(w.tryRunner()->isRunning());
    QTRY_VERIFY2(s->effectText(key).contains(QStringLiteral("training throughput")), qPrintable(s->effectText(key)));
    QVERIFY2(w.experiments()->answerText().startsWith(QStringLiteral("Trying")), qPrintable(w.experiments()->answerText()));
    QTest::qWait(1500);  // a trial's run has started: it stays out of the list
    QVERIFY(w.runs()->runs().isEmpty());

    QSignalSpy done(w.tryRunner(), &wb::ui::ExperimentRunner::finished);
    QTest::mouseClick(s->tryButton(key), Qt::LeftButton);
    QVERIFY(done.wait(120000));
    QCOMPARE(done.first().at(1).toBool(), true);  // cancelled
    QCOMPARE(s->tryButton(key)->text(), QStringLiteral("Try vs baseline"));
    QVERIFY(s->tryButton(QStringLiteral("precision"))->isEnabled());
    const QDir out(done.first().at(0).toString());
    const auto tried = wb::proto::readJsonFile(out.filePath(QStringLiteral("try.json")).toStdString());
    QVERIFY(tried.ok());
    QCOMPARE((*tried)["status"].get<std::string>(), std::string("cancelled"));
    QCOMPARE((*tried)["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(QFileInfo::exists(out.filePath(QStringLiteral("math.json"))), "the math check measured before the trials is kept");
    for (const auto* run : w.runs()->runs())
      if (!run->runDir().isEmpty()) QVERIFY2(QFileInfo::exists(run->runDir()), qPrintable(run->runDir()));  // nothing listed was removed
    QVERIFY2(s->effectText(key).contains(QStringLiteral("cancelled")) && !s->effectText(key).contains(QStringLiteral("no speedup taken")),
             qPrintable(s->effectText(key)));
    QVERIFY2(w.statusBar()->toolTip().contains(QStringLiteral("cancelled")) && w.statusBar()->toolTip().contains(QStringLiteral("the math check")),
             qPrintable(w.statusBar()->toolTip()));
    // Trying it again continues it in the same folder and says what it reuses.
    QVERIFY(w.trySpeedup(key));
    QCOMPARE(w.tryRunner()->arguments().value(w.tryRunner()->arguments().indexOf(QStringLiteral("--out")) + 1), out.path());
    QVERIFY2(w.statusBar()->toolTip().contains(QStringLiteral("reusing the math check")), qPrintable(w.statusBar()->toolTip()));
    w.cancelTry();
    QTRY_VERIFY_WITH_TIMEOUT(!w.tryRunner()->isRunning(), 120000);
    qunsetenv("WB_PROBES_DIR");
  }

  // The tab titled `title` made current in whichever tab widget of `w` has it.
  static void showTab(QWidget& w, const QString& title) {
    for (auto* tabs : w.findChildren<QTabWidget*>())
      for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == title) tabs->setCurrentIndex(i);
  }

  // Double-clicks the newest experiment of `kind` in the Ladder tab's list of the runs folder's.
  static void openNewest(QWidget& w, const QString& kind) {
    auto* list = w.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    for (int r = 0; list && r < list->rowCount(); ++r)
      if (list->item(r, 1) && list->item(r, 1)->text() == kind) {
        Q_EMIT list->cellDoubleClicked(r, 0);
        QTest::qWait(500);
        return;
      }
  }

  // For a person to look at: the window at 1024x700, 1280x800 and 1920x1080, each with the Live
  // tab, then the Experiments tab's Ladder, Chart and Fastest pages (WB_GRAB_ROOT's newest ladder and search); back at
  // 1280x800 on the Live tab after.
  static void grabAtEachSize(wb::ui::MainWindow& w) {
    const QString dir = qEnvironmentVariable("WB_GRAB_DIR");
    // The Compare tab: the run named "base" against the others.
    for (auto* run : w.runs()->runs())
      if (run->name() == QLatin1String("base")) w.runs()->setBaseline(run);
    for (auto* run : w.runs()->runs()) w.runs()->setShown(run, true);
    showTab(w, QStringLiteral("Experiments"));
    showTab(w, QStringLiteral("Ladder"));
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + QStringLiteral("/experiments-listed.png")));
    openNewest(w, QStringLiteral("try"));  // its answer first
    QVERIFY(w.grab().save(dir + QStringLiteral("/experiments-try.png")));
    w.experiments()->closeExperiment();
    openNewest(w, QStringLiteral("search"));  // its runs as a group in the runs list
    openNewest(w, QStringLiteral("ladder"));
    for (const QSize size : {QSize(1024, 700), QSize(1280, 800), QSize(1920, 1080)}) {
      w.resize(size);
      const QString stem = dir + QStringLiteral("/size-%1x%2").arg(size.width()).arg(size.height());
      for (const QString& tab : {QStringLiteral("Live"), QStringLiteral("Compare"), QStringLiteral("Ladder"), QStringLiteral("Chart"),
                                 QStringLiteral("Fastest")}) {
        if (tab != QLatin1String("Live") && tab != QLatin1String("Compare")) showTab(w, QStringLiteral("Experiments"));
        showTab(w, tab);
        QTest::qWait(300);
        QVERIFY(w.grab().save(stem + QStringLiteral("-") + tab.toLower() + QStringLiteral(".png")));
      }
    }
    w.resize(1280, 800);
    showTab(w, QStringLiteral("Live"));
    QTest::qWait(300);
  }

  // At 1280x800 the speedups are where the eye lands: the rows from Loader workers to Sharding,
  // their Try buttons and the Probe button are in view without scrolling. WB_GRAB_DIR=<folder>
  // also saves the window as window-1280x800.png for a person to look at (then with the
  // machine's real capabilities and WB_GRAB_ROOT's runs; WB_GRAB_TRY=<key> presses that row's
  // Try vs baseline and saves window-1280x800-try-<key>.png once both runs end).
  void speedupsAreInViewAt1280x800() {
    const bool grab = qEnvironmentVariableIsSet("WB_GRAB_DIR");
    QTemporaryDir scratch = wb::ui::test::scratchRoot();
    wb::ui::MainWindow::Options o = wb::ui::test::windowOptions(scratch);
    if (grab) o.runsRoot = qEnvironmentVariable("WB_GRAB_ROOT"), o.queryCli = true;
    wb::ui::MainWindow w(o);
    if (!grab) w.setup()->setCapabilities(cpuCapabilities());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.setup()->capabilities().contains("cores"), 60000);
    auto* scroll = qobject_cast<QAbstractScrollArea*>(w.setup()->parentWidget()->parentWidget());
    QVERIFY(scroll);
    QWidget* viewport = scroll->viewport();
    auto inView = [viewport](const QWidget* wgt) {
      return viewport->rect().contains(QRect(wgt->mapTo(viewport, QPoint(0, 0)), wgt->size()));
    };
    auto* s = w.setup()->speedups();
    QVERIFY(inView(s->probeButton()));
    for (const char* key : {"workers", "pin_memory", "devices", "precision", "early_stopping", "sharding"})
      QVERIFY2(inView(s->tryButton(QString::fromLatin1(key))), key);
    if (!grab) return;
    QTest::qWait(500);
    grabAtEachSize(w);
    QVERIFY(w.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/window-1280x800.png")));
    // The optimiser fields below the speedups, LR scaling (and its warm-up) beside the learning rate.
    if (auto* area = qobject_cast<QScrollArea*>(scroll); area && w.setup()->findChild<QWidget*>(QStringLiteral("optim.lr_scaling"))) {
      area->ensureWidgetVisible(w.setup()->findChild<QWidget*>(QStringLiteral("optim.lr_scaling")), 50, 200);
      QTest::qWait(200);
      QVERIFY(w.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/window-1280x800-optimiser.png")));
      area->ensureWidgetVisible(s->tryButton(QStringLiteral("fused_optimizer")), 50, 300);  // the levers' rows
      QTest::qWait(200);
      QVERIFY(w.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/window-1280x800-levers.png")));
      area->ensureWidgetVisible(s->probeButton());
    }
    const QString key = qEnvironmentVariable("WB_GRAB_TRY");
    if (key.isEmpty()) return;
    QTest::mouseClick(s->tryButton(key), Qt::LeftButton);
    showTab(w, QStringLiteral("Experiments"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.tryRunner()->phase().isEmpty() || !w.tryRunner()->isRunning(), 300000);
    QTest::qWait(3000);  // the time so far moves on
    QVERIFY(w.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/window-1280x800-try-running.png")));
    QTRY_VERIFY_WITH_TIMEOUT(!w.tryRunner()->isRunning(), 600000);
    QTest::qWait(1000);
    QVERIFY(w.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/window-1280x800-try-") + key + QStringLiteral(".png")));
  }
};

QTEST_MAIN(TestSpeedupsFront)
#include "test_speedups_front.moc"
