// `workbench-cli try` by parts, on real short runs of tiny data: a change that keeps the math (loader
// workers) is answered from the math check and the segments alone, no run to the target; one that
// changes it (bf16) gets the experiment's reference runs and the variant's runs, each stopping at
// the target; a second try of the experiment reuses the reference runs, never reruns them; a
// reference run that is gone is run again in a new folder and said; a reference.json cut mid-file
// is named and rebuilt from the run folders, which are reused; a reference folder of another
// experiment or of changed data is refused naming what differs; a larger global batch too slow to be
// faster is answered by the bound when only "faster?" is asked. No test asserts a time.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <thread>

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "../support/event_stream.h"
#include "../support/machine.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

QStringList tiny(const QString& refs, const QString& out, const char* vary, std::initializer_list<const char*> moreVary = {}) {
  QStringList args{QStringLiteral("try"), QStringLiteral("--json"), QStringLiteral("--out"), out,
                   QStringLiteral("--references"), refs, QStringLiteral("--vary"), QString::fromLatin1(vary),
                   QStringLiteral("--reference-runs"), QStringLiteral("3"), QStringLiteral("--variant-runs"), QStringLiteral("3")};
  for (const char* kv : moreVary) args << QStringLiteral("--vary") << QString::fromLatin1(kv);
  for (const char* kv : {"model.name=lenet", "data.limit_train=2000", "data.limit_val=500", "train.epochs=1",
                         "train.threads=1", "train.batch_size=32", "optim.lr=0.05", "optim.momentum=0.9"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args;
}

json run(const QStringList& args, wb::test::ProcResult* proc) {
  *proc = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000);
  return json::parse(proc->out.toStdString(), nullptr, false);
}

json readJson(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return json();
  return json::parse(f.readAll().toStdString(), nullptr, false);
}

// The part of a composed time to target called `name` (try.json's composed.parts), else null.
json partNamed(const json& parts, const std::string& name) {
  for (const auto& p : parts)
    if (p.value("name", std::string()) == name) return p;
  return json();
}

bool writeJson(const QString& file, const json& doc) {
  QFile f(file);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(QByteArray::fromStdString(doc.dump(2))) > 0;
}

// A try's kept training throughput (trials.json, what a try continued from its folder reads instead
// of timing again): three pairs of 300-step trials whose variant ran at a fifth of the baseline's rate.
// Its start-up (variant_startup_s) is the caller's.
json fifthRateTrials() {
  json e{{"point", 0.2}, {"lo", 0.19}, {"hi", 0.21}, {"level", 0.96}, {"verdict", "slower"}, {"pairs", 3},
         {"baseline_runs", 3}, {"variant_runs", 3}, {"min_effect", 0.02}, {"method", "mean of 3 per-pair log-ratios"}};
  return {{"kind", "trials"}, {"changed", "speedups.devices 1 → 2"}, {"rounds", 3}, {"steps_per_trial", 300},
          {"baseline_rates", {11570.0, 11717.0, 11726.0}}, {"variant_rates", {2314.0, 2343.0, 2345.0}},
          {"contended", false}, {"estimate", e}};
}

}  // namespace

class TestCliTryParts : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() { WB_NEED(wb::test::missingFashionMnist()); }

  void aLeverThatKeepsTheMathNeedsNoRunToTheTarget() {
    QTemporaryDir root;
    wb::test::ProcResult proc;
    const json doc = run(tiny(root.filePath(QStringLiteral("refs")), root.filePath(QStringLiteral("w")), "speedups.workers=1"), &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(doc["math"]["keeps_math"].get<bool>(), doc["math"].dump().c_str());
    QVERIFY(doc["math"]["checked"].get<bool>());
    QVERIFY(doc["variant_runs"].empty());
    QVERIFY(doc["references"].is_null());  // the experiment has none yet, and this lever needs none
    QVERIFY(!QDir(root.filePath(QStringLiteral("refs"))).exists());
    // The evaluation's loader has the workers too: its evaluations are timed as well, in their
    // fewest rounds (a share of the run), and the composed speedup lies between the two speeds.
    const json& ev = doc["evaluation"];
    QCOMPARE(ev["kind"].get<std::string>(), std::string("evaluation segments"));
    QVERIFY2(ev["rounds"].get<int>() >= 2 && ev["rounds"].get<int>() <= 3, ev.dump().c_str());
    const double composed = doc["estimate"]["to_target"]["point"].get<double>();
    const double throughput = doc["estimate"]["throughput"]["point"].get<double>();
    const double evaluation = ev["estimate"]["point"].get<double>();
    QVERIFY2(composed >= std::min(throughput, evaluation) * (1 - 1e-9) && composed <= std::max(throughput, evaluation) * (1 + 1e-9),
             doc["words"].dump().c_str());
    // The estimate in the product's own words, as the throughput's (a bound would read "at most").
    QVERIFY2(doc["estimate"]["to_target"].value("text", "").find("×") != std::string::npos, doc["estimate"].dump().c_str());
    QVERIFY(doc["throughput"]["rounds"].get<int>() >= 3);
    QVERIFY(proc.err.contains("by parts") || doc["words"].get<std::string>().find("throughput") != std::string::npos);
    // One process checked the math and timed the segments: no process of its own for the check.
    const QString w = root.filePath(QStringLiteral("w"));
    QVERIFY2(!QFileInfo::exists(w + QStringLiteral("/logs/math.log")), "the math check ran in the segments' process");
    QFile log(w + QStringLiteral("/logs/segments.log"));
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY(log.readAll().contains("the math check: variant"));
  }

  void aLeverThatChangesTheMathIsTrainedToTheTargetAndTheReferencesAreReused() {
    QTemporaryDir root;
    const QString refs = root.filePath(QStringLiteral("refs"));
    wb::test::ProcResult proc;
    const json doc = run(tiny(refs, root.filePath(QStringLiteral("bf16")), "speedups.precision=bf16-mixed") +
                             QStringList{QStringLiteral("--parallel-runs"), QStringLiteral("0"), QStringLiteral("--variant-parallel"),
                                         QStringLiteral("2")},
                         &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QVERIFY2(!doc["math"]["keeps_math"].get<bool>(), doc["math"].dump().c_str());
    QCOMPARE(doc["references"]["ran"].get<int>(), 3);
    QCOMPARE(doc["variant_runs"].size(), size_t(doc["variant_looks"]["runs"].get<int>()));
    // bf16 evaluates under autocast too, but its runs to the target time their own evaluations.
    QVERIFY2(doc["evaluation"].is_null(), doc["evaluation"].dump().c_str());
    QVERIFY(doc["samples"].is_object());
    QCOMPARE(doc["samples"]["reference"]["runs"].get<int>(), 3);
    const double target = doc["target_acc"].get<double>();
    // Each variant run stopped at its first evaluation at or above the target.
    for (const auto& dir : doc["variant_runs"]) {
      const json summary = readJson(QString::fromStdString(dir.get<std::string>()) + QStringLiteral("/summary.json"));
      QVERIFY2(summary.contains("samples_to_target"), summary.dump().c_str());
      QCOMPARE(summary["target_val_acc"].get<double>(), target);
    }
    // --parallel-runs 0: the reference runs ran side by side, as many as the cores hold at one core
    // each (up to the three asked for), the cores shared among them.
    const int cores = std::max(1, int(std::thread::hardware_concurrency())), atOnce = std::min(cores, 3);
    const QString refRuns = QString::fromStdString(doc["references"]["dir"].get<std::string>()) + QStringLiteral("/runs/");
    // The baseline's start-up weighs only the reference runs no other process slowed (side by side,
    // each slows the other), as the variant's first run runs alone: all of them when none ran so.
    std::vector<double> quiet, all;
    for (const QString& seed : QDir(refRuns).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
      const json config = readJson(refRuns + seed + QStringLiteral("/config.json"));
      QCOMPARE(config["train"]["threads"].get<int>(), atOnce > 1 ? std::max(1, cores / atOnce) : 0);
      const json summary = readJson(refRuns + seed + QStringLiteral("/summary.json"));
      all.push_back(summary["time_to_first_step_s"].get<double>());
      // Slowed: by another load (contended) or by its own experiment's runs beside it (shared).
      const json cpu = summary.value("cpu", json::object());
      if (!cpu.value("contended", false) && !cpu.value("shared", false)) quiet.push_back(all.back());
    }
    const std::vector<double>& timed = quiet.empty() ? all : quiet;
    QCOMPARE(doc["references"]["timed"].get<size_t>(), timed.size());
    double logSum = 0;
    for (double t : timed) logSum += std::log(t);
    const json startup = partNamed(doc["composed"]["parts"], "start-up (baseline)");
    QVERIFY2(startup.is_object(), doc["composed"].dump().c_str());
    QVERIFY2(std::abs(startup["point"].get<double>() / std::exp(logSum / double(timed.size())) - 1) < 1e-6, startup.dump().c_str());
    // --variant-parallel 2: the variant's first run ran alone (its start-up and evaluation time are the
    // variant's), then the second and third side by side, looked at in seed order; a run past the
    // look that settled it is kept but not counted.
    const json& looks = doc["variant_looks"];
    QCOMPARE(looks["at_once"].get<int>(), 2);
    QCOMPARE(looks["runs"].get<int>() + int(looks["beyond"].size()), 3);
    const int alone = proc.err.indexOf("variant run to the target, seed 1001"), wave = proc.err.indexOf("runs 2-3 side by side");
    QVERIFY2(alone >= 0 && wave > alone, proc.describe().constData());
    // A run a cluster's array reran (Slurm ended its first attempt, cut, and the rerun finished in
    // <folder>.rerun) is found when the try continues: the seed does not run a third time.
    const QString bf16 = root.filePath(QStringLiteral("bf16"));
    const QString second = QString::fromStdString(doc["variant_runs"][1].get<std::string>());
    QVERIFY(QDir().rename(second, second + QStringLiteral(".rerun")));
    QVERIFY(QDir().mkpath(second));
    const json continued = run(tiny(refs, bf16, "speedups.precision=bf16-mixed") +
                                   QStringList{QStringLiteral("--variant-parallel"), QStringLiteral("2")},
                               &proc);
    QVERIFY2(proc.rc == 0 && continued.is_object(), proc.describe().constData());
    QCOMPARE(continued["variant_runs"][1].get<std::string>(), (second + QStringLiteral(".rerun")).toStdString());
    QVERIFY2(!QFileInfo::exists(second + QStringLiteral("-r2")), proc.describe().constData());
    // The split is said: throughput, samples to target.
    const std::string words = doc["words"].get<std::string>();
    QVERIFY2(words.find("throughput") != std::string::npos && words.find("samples to target") != std::string::npos, words.c_str());

    // Asked only "faster?" (--only-faster), a variant too slow for its run to win once it needs
    // some share of the reference runs' samples stops there, not at 3x them: from the whole try's
    // math check and segments, kept with the variant at a fiftieth of the baseline's rate. (At a
    // fifth, these runs' start-up outweighs their training: with the reference runs' start-up slowed
    // by a test beside them, the variant could still be faster at 3x and trained to the target.)
    QVERIFY2(doc["variant_looks"]["cap"].get<std::string>() == "cap x the reference runs'", doc["variant_looks"].dump().c_str());
    const QString futile = root.filePath(QStringLiteral("futile"));
    QVERIFY(QDir().mkpath(futile + QStringLiteral("/parts")));  // a try to continue
    QVERIFY(QFile::copy(bf16 + QStringLiteral("/math.json"), futile + QStringLiteral("/math.json")));
    json slow = readJson(bf16 + QStringLiteral("/segments.json"));
    for (auto& rate : slow["variant_rates"]) rate = rate.get<double>() / 50;
    slow["estimate"].update(json{{"point", 0.02}, {"lo", 0.019}, {"hi", 0.021}, {"verdict", "slower"}});
    QVERIFY(writeJson(futile + QStringLiteral("/segments.json"), slow));
    const json cut = run(tiny(refs, futile, "speedups.precision=bf16-mixed") + QStringList{QStringLiteral("--only-faster")}, &proc);
    QVERIFY2(proc.rc == 0 && cut.is_object(), proc.describe().constData());
    QVERIFY2(proc.err.contains("not at the target by then, it cannot be faster"), proc.describe().constData());
    // Its first run stops short of the reference's samples (about 0.05-0.3x them here), not at 3x.
    // The looks stop on the bound it gives, after that run or, where the run's own start-up was
    // quicker than the composed margin (a loaded host), after the next, each cut where it can no
    // longer be faster.
    const json& cutLooks = cut["variant_looks"];
    QCOMPARE(cutLooks["cap"].get<std::string>(), std::string("cannot be faster past it"));
    const double referenceSamples = cut["samples"]["reference"]["samples"]["value"].get<double>();
    const json firstCut = readJson(QString::fromStdString(cut["variant_runs"][0].get<std::string>()) + QStringLiteral("/summary.json"));
    QVERIFY2(firstCut["samples"].get<double>() < referenceSamples, firstCut.dump().c_str());
    const std::string stopped = cutLooks["stopped"].get<std::string>();
    QVERIFY2(stopped == "cannot be faster" || stopped == "slower bound", cutLooks.dump().c_str());
    const json lastCut = readJson(QString::fromStdString(cut["variant_runs"].back().get<std::string>()) + QStringLiteral("/summary.json"));
    QVERIFY2(lastCut["samples"].get<double>() <= cutLooks["cap_samples"].get<double>() + 32, lastCut.dump().c_str());
    // What stopped the looks: the bound under 1 + --min-effect (0.02), the rule's own edge (it read
    // 1.0199 once on a loaded host, so "under 1" is not what the rule promises).
    QVERIFY2(cut["estimate"]["to_target"]["point"].get<double>() < 1.02, cut["estimate"].dump().c_str());

    // A second try of the experiment reuses the three reference runs: none runs again.
    const QString refDir = QString::fromStdString(doc["references"]["dir"].get<std::string>());
    const json again = run(tiny(refs, root.filePath(QStringLiteral("lr")), "optim.lr=0.1"), &proc);
    QVERIFY2(proc.rc == 0 && again.is_object(), proc.describe().constData());
    QCOMPARE(again["references"]["reused"].get<int>(), 3);
    QCOMPARE(again["references"]["ran"].get<int>(), 0);
    // A change of the lr is a try by parts: the segments ran without it (the lr does not change a
    // step's time), the runs to the target with it.
    QCOMPARE(again["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(again["throughput"]["changed"].get<std::string>().find("optim.lr") == std::string::npos, again["throughput"].dump().c_str());
    QVERIFY(again["samples"].is_object());
    // Only the optimiser's numbers changed: its start-up and evaluations are the reference runs', not
    // its own runs' (which would only add their noise).
    std::map<std::string, json> part;
    for (const auto& p : again["composed"]["parts"]) part[p["name"].get<std::string>()] = p;
    QVERIFY2(part.count("evaluation") && part["evaluation"]["lo"].get<double>() == 1 && part["evaluation"]["hi"].get<double>() == 1,
             again["composed"].dump().c_str());
    // One start-up for both arms, whose uncertainty is counted once (not the baseline's and a copy).
    QVERIFY2(part.count("start-up (both)") && !part.count("start-up (variant)") && !part.count("start-up (baseline)"),
             again["composed"].dump().c_str());
    QCOMPARE(QDir(refDir + QStringLiteral("/runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 3);

    // A reference run that is gone runs again in a new folder, and the log names it.
    const json stored = readJson(refDir + QStringLiteral("/reference.json"));
    const QString gone = refDir + QStringLiteral("/") + QString::fromStdString(stored["runs"][1]["dir"].get<std::string>());
    QVERIFY(QDir(gone).removeRecursively());
    const json third = run(tiny(refs, root.filePath(QStringLiteral("workers")), "speedups.precision=bf16-mixed"), &proc);
    QVERIFY2(proc.rc == 0 && third.is_object(), proc.describe().constData());
    QCOMPARE(third["references"]["reused"].get<int>(), 2);
    QCOMPARE(third["references"]["ran"].get<int>(), 1);
    QVERIFY2(proc.err.contains(gone.toUtf8() + " (seed ") && proc.err.contains(") is gone: it runs again in a new folder"),
             proc.describe().constData());
    QVERIFY2(proc.err.contains(gone.toUtf8() + "-r2"), proc.describe().constData());  // a new folder, never the gone one's name
    QVERIFY(!QDir(gone).exists());

    // A reference.json cut mid-file is named, kept aside, and rebuilt from the run folders there
    // (their configs and seeds): the lr try continued reuses all three, none runs again.
    QFile record(refDir + QStringLiteral("/reference.json"));
    QVERIFY(record.open(QIODevice::ReadWrite));
    const QByteArray whole = record.readAll();
    QVERIFY(record.resize(whole.size() / 2));
    record.close();
    const json rebuilt = run(tiny(refs, root.filePath(QStringLiteral("lr")), "optim.lr=0.1"), &proc);
    QVERIFY2(proc.rc == 0 && rebuilt.is_object(), proc.describe().constData());
    QVERIFY2(proc.err.contains("reference.json is unreadable: it is cut mid-file") && proc.err.contains("rebuilt from the run folders"),
             proc.describe().constData());
    QCOMPARE(rebuilt["references"]["reused"].get<int>(), 3);
    QCOMPARE(rebuilt["references"]["ran"].get<int>(), 0);
    QFile aside(refDir + QStringLiteral("/reference.unreadable-1.json"));
    QVERIFY(aside.open(QIODevice::ReadOnly));
    QCOMPARE(aside.readAll(), whole.left(whole.size() / 2));

    // Another experiment's record in this experiment's folder is refused, naming the field.
    json other = readJson(refDir + QStringLiteral("/reference.json"));
    other["config"]["optim"]["lr"] = 0.5;
    QVERIFY(writeJson(refDir + QStringLiteral("/reference.json"), other));
    run(tiny(refs, root.filePath(QStringLiteral("other")), "speedups.precision=bf16-mixed"), &proc);
    QCOMPARE(proc.rc, 2);
    QVERIFY2(proc.err.contains("another experiment") && proc.err.contains("optim.lr"), proc.describe().constData());

    // Runs of data that has changed since are refused, naming the dataset.
    other["config"]["optim"]["lr"] = 0.05;
    other["dataset_id"] = "0000000000000000";
    QVERIFY(writeJson(refDir + QStringLiteral("/reference.json"), other));
    run(tiny(refs, root.filePath(QStringLiteral("data")), "speedups.precision=bf16-mixed"), &proc);
    QCOMPARE(proc.rc, 2);
    QVERIFY2(proc.err.contains("dataset changed"), proc.describe().constData());
  }

  // Channels-last switches inside one process (the weights change layout between segments): its
  // throughput is interleaved segments; it keeps the math, so no run trains to the target.
  void aLayoutChangeIsTimedBySegmentsInOneProcess() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("cl"));
    wb::test::ProcResult proc;
    const json doc = run(tiny(root.filePath(QStringLiteral("refs")), out, "speedups.channels_last=true"), &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(doc["math"]["keeps_math"].get<bool>(), doc["math"].dump().c_str());
    QCOMPARE(doc["throughput"]["kind"].get<std::string>(), std::string("segments"));
    QVERIFY2(doc["throughput"]["rounds"].get<int>() >= 2, doc["throughput"].dump().c_str());
    QVERIFY(doc["variant_runs"].empty());
    QVERIFY2(!QFileInfo::exists(out + QStringLiteral("/trials")), "no whole-process trials");
    // The evaluation's forward passes are in the new layout too: timed by segments as well, after
    // the training's rounds in their process (no process of their own).
    QCOMPARE(doc["evaluation"]["kind"].get<std::string>(), std::string("evaluation segments"));
    QVERIFY2(!QFileInfo::exists(out + QStringLiteral("/logs/evaluation-segments.log")), "the evaluations had a process of their own");
    QFile log(out + QStringLiteral("/logs/segments.log"));
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY(log.readAll().contains("the evaluations too"));
  }

  // The decoded cache cannot switch inside a running process (each arm would need its own filled
  // cache): short whole-process trials, cut at 300 steps, in pairs, time it; it keeps the math, so
  // no run trains to the target.
  void aChangeAProcessCannotSwitchIsTimedByShortTrials() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("dc"));
    wb::test::ProcResult proc;
    const json doc = run(tiny(root.filePath(QStringLiteral("refs")), out, "speedups.decoded_cache=memory"), &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    QCOMPARE(doc["throughput"]["kind"].get<std::string>(), std::string("trials"));
    QCOMPARE(doc["throughput"]["steps_per_trial"].get<int>(), 300);
    QVERIFY(doc["variant_runs"].empty());
    const json pairs = readJson(out + QStringLiteral("/trials/pairs.json"));
    QVERIFY2(pairs.is_object(), "the trials ran as pairs through the runner");
    int trials = 0;
    for (const QString& dir : QDir(out + QStringLiteral("/trials/runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
      const json summary = readJson(out + QStringLiteral("/trials/runs/") + dir + QStringLiteral("/summary.json"));
      QCOMPARE(summary["steps"].get<int>(), 300);  // cut at the trial's steps, not a whole run
      ++trials;
    }
    // Three pairs, or two when the second's verdict is already clear (one more per contended pair).
    QVERIFY2(trials >= 4 && trials % 2 == 0, qPrintable(QString::number(trials)));
    // The validation split is decoded once too: its evaluations are timed by short trials as well.
    QCOMPARE(doc["evaluation"]["kind"].get<std::string>(), std::string("evaluation trials"));
    // Why the trials stopped is in the record, and it is the runner's rule whatever the load beside:
    // a clear verdict, or every look spent (three pairs and the replacement of one not counted or
    // set aside). Fewer than three usable pairs without a clear verdict only when the load took them.
    const json& tp = doc["throughput"];
    const json& estimate = tp["estimate"];
    const std::string settled = tp["settled"].get<std::string>(), verdict = estimate["verdict"].get<std::string>();
    const int counted = tp["rounds"].get<int>(), run = tp["pairs_run"].get<int>();
    const int usable = counted - tp.value("set_aside", 0);
    QCOMPARE(run, trials / 2);
    QVERIFY2(counted <= run && usable >= 0, tp.dump().c_str());
    if (settled == "clear") {
      QVERIFY2(verdict == "faster" || verdict == "slower" || verdict == "within noise", tp.dump().c_str());
    } else {
      QVERIFY2(settled == "max pairs", tp.dump().c_str());
      QVERIFY2(usable >= 3 || run == 3 + 1, tp.dump().c_str());  // three looks, one replacement (stats::kReplacedPairs)
      if (usable < 3) QVERIFY2(run > usable, tp.dump().c_str());  // the missing pairs were run and not usable
    }
  }

  // The evaluation batch changes only the evaluation: its time comes from evaluations interleaved
  // in one process, each segment whole passes over the configured validation split (500 images);
  // the training steps are not measured (they are the baseline's) and no run trains to the target.
  void anEvaluationLeverIsTimedByEvaluationsInOneProcess() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("eb"));
    wb::test::ProcResult proc;
    const json doc = run(tiny(root.filePath(QStringLiteral("refs")), out, "train.eval_batch_size=16"), &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(doc["math"]["keeps_math"].get<bool>(), doc["math"].dump().c_str());
    QCOMPARE(doc["throughput"]["kind"].get<std::string>(), std::string("unchanged"));
    QCOMPARE(doc["estimate"]["throughput"]["point"].get<double>(), 1.0);
    const json& ev = doc["evaluation"];
    QCOMPARE(ev["kind"].get<std::string>(), std::string("evaluation segments"));
    QVERIFY2(ev["rounds"].get<int>() >= 2 && ev["passes_per_segment"].get<int>() >= 1, ev.dump().c_str());
    QVERIFY2(ev["baseline_eval_s"].size() == size_t(ev["rounds"].get<int>()) &&
                 ev["variant_eval_s"].size() == ev["baseline_eval_s"].size(), ev.dump().c_str());
    // One evaluation's seconds: the validation split (500 images) over each round's rate.
    const double rate = ev["baseline_rates"][0].get<double>(), seconds = ev["baseline_eval_s"][0].get<double>();
    QVERIFY2(std::fabs(seconds * rate - 500) < 1e-6 * 500, ev.dump().c_str());
    QVERIFY2(ev["baseline_train_rates"].size() == 1 && ev["baseline_train_rates"][0].get<double>() > 0, ev.dump().c_str());
    QVERIFY(ev["estimate"]["point"].get<double>() > 0);
    QVERIFY(doc["variant_runs"].empty());
    QVERIFY(!QDir(root.filePath(QStringLiteral("refs"))).exists());
    QVERIFY(!QDir(out + QStringLiteral("/trials")).exists());
    QVERIFY2(!QDir(out + QStringLiteral("/evaluation-trials")).exists(), "no whole-process trials");
    QVERIFY(QFileInfo::exists(out + QStringLiteral("/evaluation-segments.json")));
    QVERIFY2(!QFileInfo::exists(out + QStringLiteral("/logs/math.log")), "the math check ran in the evaluations' process");
    QVERIFY2(doc["medians"]["eval_s"]["baseline"].is_number(), doc["medians"].dump().c_str());
  }

  // Early stopping changes only where the run ends: it is replayed on the experiment's reference
  // runs (each epoch's last evaluation through the trainer's rule), with no run trained for it,
  // and it can never shorten the time to the target, only cut a run before it.
  void earlyStoppingIsReplayedOnTheReferenceRuns() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("es"));
    QStringList args = tiny(root.filePath(QStringLiteral("refs")), out, "speedups.early_stopping.patience=1");
    args << QStringLiteral("--set") << QStringLiteral("train.epochs=3") << QStringLiteral("--set")
         << QStringLiteral("data.limit_train=1000");
    wb::test::ProcResult proc;
    const json doc = run(args, &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["method"].get<std::string>(), std::string("composed"));
    QCOMPARE(doc["references"]["ran"].get<int>(), 3);
    const json& runs = doc["early_stopping"]["runs"];
    QCOMPARE(int(runs.size()), 3);
    for (const auto& r : runs) {
      QVERIFY(r["stop_epoch"].get<int>() >= 1 && r["stop_epoch"].get<int>() <= 3);
      QVERIFY(r.contains("target_first"));
    }
    QVERIFY(doc["variant_runs"].empty());
    QCOMPARE(doc["throughput"]["kind"].get<std::string>(), std::string("unchanged"));
    QVERIFY(!QDir(out + QStringLiteral("/runs")).exists());
    QVERIFY(!QDir(out + QStringLiteral("/trials")).exists());
    // One process cannot show where a run ends: the math record says so, made without a process.
    QVERIFY2(!doc["math"]["checked"].get<bool>() && !doc["math"]["keeps_math"].get<bool>(), doc["math"].dump().c_str());
    QCOMPARE(doc["math"]["train_samples"].get<int>(), 1000);
    QVERIFY(readJson(out + QStringLiteral("/math.json"))["verdict"].get<std::string>().rfind("not checked in one process", 0) == 0);
    QVERIFY2(!QFileInfo::exists(out + QStringLiteral("/logs/math.log")), "a process started to say it cannot check");
    const double x = doc["estimate"]["to_target"]["point"].get<double>();
    QVERIFY2(!(x > 1 + 1e-9), doc["words"].dump().c_str());
    QVERIFY2(doc["words"].get<std::string>().find("reference runs") != std::string::npos, doc["words"].dump().c_str());
  }

  // A larger global batch (devices 2 at the same lr) needs no fewer samples to the target than the
  // baseline: asked the whole question, a try trains the variant to the target; asked only
  // "faster?" (--only-faster), a throughput too slow for it to be faster even so is answered by
  // that bound, without a variant run to the target. Both read a kept trials record (a fifth of the
  // baseline's rate; the two processes starting in twice the slowest reference run's start-up, so
  // that a loaded host's spread of start-ups cannot make the variant look quicker to start).
  void aLargerBatchTooSlowToBeFasterIsAnsweredByTheBound() {
    QTemporaryDir root;
    const QString refs = root.filePath(QStringLiteral("refs"));
    auto keepTrials = [&](const char* name, double startup) {
      json t = fifthRateTrials();
      t["variant_startup_s"] = {startup, startup, startup};
      return QDir(root.path()).mkpath(QString::fromLatin1(name) + QStringLiteral("/parts")) &&  // a try to continue
             writeJson(root.filePath(QString::fromLatin1(name) + QStringLiteral("/trials.json")), t);
    };
    QVERIFY(keepTrials("whole", 1.0));
    wb::test::ProcResult proc;
    const json whole = run(tiny(refs, root.filePath(QStringLiteral("whole")), "speedups.devices=2"), &proc);
    QVERIFY2(proc.rc == 0 && whole.is_object(), proc.describe().constData());
    QVERIFY2(!whole["variant_runs"].empty(), whole.dump().c_str());
    QVERIFY2(!whole["samples"].contains("assumed"), whole["samples"].dump().c_str());
    // Two ranks cannot be compared in one process: the math record says so, made without a process.
    QVERIFY2(!whole["math"]["checked"].get<bool>(), whole["math"].dump().c_str());
    QCOMPARE(whole["math"]["train_samples"].get<int>(), 2000);
    QVERIFY2(!QFileInfo::exists(root.filePath(QStringLiteral("whole/logs/math.log"))), "a process started to say it cannot check");

    const QString refDir = QString::fromStdString(whole["references"]["dir"].get<std::string>());
    double slowest = 0;
    const json stored = readJson(refDir + QStringLiteral("/reference.json"));
    for (const auto& r : stored["runs"])
      slowest = std::max(slowest, readJson(refDir + QStringLiteral("/") + QString::fromStdString(r["dir"].get<std::string>()) +
                                           QStringLiteral("/summary.json"))
                                      .value("time_to_first_step_s", 0.0));
    QVERIFY(slowest > 0 && keepTrials("bound", 2 * slowest));
    const json bound =
        run(tiny(refs, root.filePath(QStringLiteral("bound")), "speedups.devices=2") + QStringList{QStringLiteral("--only-faster")}, &proc);
    QVERIFY2(proc.rc == 0 && bound.is_object(), proc.describe().constData());
    QCOMPARE(bound["references"]["ran"].get<int>(), 0);  // the whole try's, reused
    QVERIFY2(proc.err.contains("no run to the target"), proc.describe().constData());
    QVERIFY2(bound["variant_runs"].empty(), bound["variant_runs"].dump().c_str());
    QCOMPARE(bound["variant_looks"]["runs"].get<int>(), 0);
    QCOMPARE(bound["variant_looks"]["stopped"].get<std::string>(), std::string("cannot be faster"));
    QVERIFY2(bound["samples"].contains("assumed"), bound["samples"].dump().c_str());
    QCOMPARE(bound["composed"]["bound"].get<std::string>(), std::string("at most"));
    QVERIFY2(bound["estimate"]["to_target"]["hi"].get<double>() < 1.0, bound["estimate"].dump().c_str());
  }

  // Asked only "faster?" (--only-faster, the ladder's question), a throughput measured under
  // contention leaves no verdict, whatever the samples to the target: no variant run starts (the
  // reference runs still do: they are the experiment's, kept). Read from a kept trials record whose
  // every pair was contended, as a loaded host leaves it.
  void aContendedThroughputStartsNoRunToTheTarget() {
    QTemporaryDir root;
    json t = fifthRateTrials();
    t["contended"] = true;
    t["rounds"] = 0;
    t["baseline_rates"] = json::array();
    t["variant_rates"] = json::array();
    t["estimate"] = {{"point", nullptr}, {"pairs", 0}, {"verdict", "1 run each: no interval"}, {"min_effect", 0.02},
                     {"method", "every pair contended"}};
    QVERIFY(QDir(root.path()).mkpath(QStringLiteral("busy/parts")) && writeJson(root.filePath(QStringLiteral("busy/trials.json")), t));
    wb::test::ProcResult proc;
    const json doc = run(tiny(root.filePath(QStringLiteral("refs")), root.filePath(QStringLiteral("busy")), "speedups.devices=2") +
                             QStringList{QStringLiteral("--only-faster")},
                         &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QCOMPARE(doc["references"]["ran"].get<int>(), 3);
    QVERIFY2(doc["variant_runs"].empty(), doc["variant_runs"].dump().c_str());
    QVERIFY(!QDir(root.filePath(QStringLiteral("busy/runs"))).exists());
    QCOMPARE(doc["variant_looks"]["runs"].get<int>(), 0);
    QCOMPARE(doc["variant_looks"]["stopped"].get<std::string>(), std::string("contended"));
    QVERIFY2(doc["samples"].contains("not_run"), doc["samples"].dump().c_str());
    QCOMPARE(doc["estimate"]["to_target"]["verdict"].get<std::string>(), std::string("contended"));
    QVERIFY2(doc["words"].get<std::string>().find("no run to the target was started") != std::string::npos, doc["words"].dump().c_str());
    QVERIFY2(proc.err.contains("no run to the target"), proc.describe().constData());
  }

  // Reference runs side by side (--parallel-runs 0) share the cores: a run left at train.threads 0
  // gets its share. The variant's runs take the same threads, its first too though it runs alone, so
  // that its start-up and evaluations are timed as those they are weighed against (not on all cores).
  // Two side by side slow each other (each takes a core, past the 0.3 of one that counts): the try says the
  // baseline's timing is overstated, and what to do.
  void aVariantRunTakesTheReferenceRunsThreads() {
    QTemporaryDir root;
    QStringList args = tiny(root.filePath(QStringLiteral("refs")), root.filePath(QStringLiteral("lr")), "optim.lr=0.1");
    args << QStringLiteral("--set") << QStringLiteral("train.threads=0") << QStringLiteral("--set") << QStringLiteral("data.limit_train=1024")
         << QStringLiteral("--parallel-runs") << QStringLiteral("0") << QStringLiteral("--variant-runs") << QStringLiteral("2")
         << QStringLiteral("--reference-runs") << QStringLiteral("2");
    wb::test::ProcResult proc;
    const json doc = run(args, &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    const int cores = std::max(1, int(std::thread::hardware_concurrency())), atOnce = std::min(cores, 2);
    const int shared = atOnce > 1 ? std::max(1, cores / atOnce) : 0;
    const QString refRuns = QString::fromStdString(doc["references"]["dir"].get<std::string>()) + QStringLiteral("/runs/");
    size_t slowed = 0;
    for (const QString& seed : QDir(refRuns).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
      QCOMPARE(readJson(refRuns + seed + QStringLiteral("/config.json"))["train"]["threads"].get<int>(), shared);
      // Slowed: by another load (contended) or by the experiment's own runs beside it (shared).
      const json cpu = readJson(refRuns + seed + QStringLiteral("/summary.json")).value("cpu", json::object());
      slowed += cpu.value("contended", false) || cpu.value("shared", false);
    }
    QVERIFY2(!doc["variant_runs"].empty(), doc.dump().c_str());
    for (const auto& dir : doc["variant_runs"])
      QCOMPARE(readJson(QString::fromStdString(dir.get<std::string>()) + QStringLiteral("/config.json"))["train"]["threads"].get<int>(), shared);
    QCOMPARE(doc["references"]["slowed"].get<size_t>(), slowed);
    if (cores > 3) return;
    QCOMPARE(slowed, size_t(2));
    args.removeAll(QStringLiteral("--json"));  // the same try, continued from its folder: its full table
    args << QStringLiteral("--details");
    proc = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000);
    QVERIFY2(proc.rc == 0 && proc.out.contains("Every one ran beside another process") && proc.out.contains("--parallel-runs 1"),
             proc.describe().constData());
  }

  // Which method: chosen when none is asked for, said with why. One try, one target: a try by parts makes the experiment's reference runs, and the same change
  // in whole runs then measures at their target, from them (said), not at its own baseline runs'.
  // Whole runs train one seed a pair, both runs of a pair the same: the reference runs' seeds.
  void tryChoosesItsMethodAndBothMeasureAtOneTargetAndWholeRunsTrainASeedAPair() {
    QTemporaryDir root;
    const QString refs = root.filePath(QStringLiteral("refs"));
    wb::test::ProcResult proc;
    // Asked nothing, try chooses. bf16 changes the math and the experiment has no reference runs yet:
    // runs evaluated once know their time to target only as "by the end", so by parts costs less for
    // the same precision even making them; runs evaluating every 2 steps (15 times) go in whole runs.
    const auto which = [&](const char* vary, const char* more = nullptr) {
      QStringList args{QStringLiteral("try"), QStringLiteral("--which-method"), QStringLiteral("--json"), QStringLiteral("--references"),
                       refs, QStringLiteral("--out"), root.filePath(QStringLiteral("which")), QStringLiteral("--vary"), QString::fromLatin1(vary)};
      for (const char* kv : {"model.name=lenet", "data.limit_train=2000", "data.limit_val=500", "train.epochs=1", more})
        if (kv) args << QStringLiteral("--set") << QString::fromLatin1(kv);
      return run(args, &proc);
    };
    const json once = which("speedups.precision=bf16-mixed");
    QVERIFY2(proc.rc == 0 && once.is_object(), proc.describe().constData());
    QCOMPARE(once["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(once["method_reason"].get<std::string>().find("with no reference runs yet") != std::string::npos, once.dump().c_str());
    const json often = which("speedups.precision=bf16-mixed", "train.eval_every_steps=2");
    QCOMPARE(often["method"].get<std::string>(), std::string("whole-runs"));
    QVERIFY2(often["method_reason"].get<std::string>().find("no reference runs yet") != std::string::npos, often.dump().c_str());
    const json workers = which("speedups.workers=2");
    QCOMPARE(workers["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(workers["method_reason"].get<std::string>().find("chosen, it keeps the training's math") != std::string::npos,
             workers.dump().c_str());
    QVERIFY(!QFile::exists(root.filePath(QStringLiteral("which"))));  // nothing ran
    const json parts = run(tiny(refs, root.filePath(QStringLiteral("parts")), "speedups.precision=bf16-mixed"), &proc);
    QVERIFY2(proc.rc == 0 && parts.is_object(), proc.describe().constData());
    QCOMPARE(parts["method"].get<std::string>(), std::string("composed"));
    QVERIFY2(parts["method_reason"].get<std::string>().find("asked for") != std::string::npos, parts.dump().c_str());
    QCOMPARE(parts["target_source"].get<std::string>(), std::string("the experiment's 3 reference runs"));
    const QString wholeOut = root.filePath(QStringLiteral("whole"));
    QStringList args = tiny(refs, wholeOut, "speedups.precision=bf16-mixed");
    args << QStringLiteral("--whole-runs") << QStringLiteral("--repeats") << QStringLiteral("2");
    const json whole = run(args, &proc);
    QVERIFY2(proc.rc == 0 && whole.is_object(), proc.describe().constData());
    QVERIFY(!whole.contains("method"));
    QCOMPARE(whole["target_acc"].get<double>(), parts["target_acc"].get<double>());
    QCOMPARE(whole["target_source"].get<std::string>(), parts["target_source"].get<std::string>());
    QVERIFY2(whole["target"].get<std::string>().find("from the experiment's 3 reference runs") != std::string::npos,
             whole["target"].dump().c_str());
    // Each pair its own seed, recorded, and both its runs trained it (their configs say so).
    std::set<int64_t> seeds;
    for (const json& pair : whole["runs"]) {
      const int64_t seed = pair["seed"].get<int64_t>();
      seeds.insert(seed);
      for (const char* side : {"reference_dir", "variant_dir"}) {
        const json config = readJson(wholeOut + QLatin1Char('/') + QString::fromStdString(pair[side].get<std::string>()) +
                                     QStringLiteral("/config.json"));
        QCOMPARE(config["seed"].get<int64_t>(), seed);
      }
    }
    QVERIFY(whole["runs"].size() >= 2);
    QCOMPARE(seeds.size(), whole["runs"].size());
    QCOMPARE(*seeds.begin(), int64_t{1001});  // the first reference run's seed
  }

  void aChangeThatCannotSwitchInOneProcessUsesWholeRuns() {
    QTemporaryDir root;
    QStringList args = tiny(root.filePath(QStringLiteral("refs")), root.filePath(QStringLiteral("mlp")), "model.name=mlp");
    args << QStringLiteral("--set") << QStringLiteral("data.limit_train=256");
    wb::test::ProcResult proc;
    const json doc = run(args, &proc);
    QVERIFY2(proc.rc == 0 && doc.is_object(), proc.describe().constData());
    QVERIFY(!doc.contains("method"));
    QVERIFY2(proc.err.contains("whole runs in pairs: model.name is not measured by parts"), proc.describe().constData());
    QVERIFY(QFile::exists(root.filePath(QStringLiteral("mlp/pairs.json"))));
  }

  // A try cut while the variant trains to the target (SIGTERM, as the window's Cancel) is
  // cancelled, never failed: its record says so and what the same command reuses, and its end
  // event says cancelled. Its phases came as events, each with n of N where it counts runs.
  void aCutTryIsCancelledAndSaysWhatItKeeps() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("bf16"));
    QStringList args = tiny(root.filePath(QStringLiteral("refs")), out, "speedups.precision=bf16-mixed");
    args.removeAll(QStringLiteral("--json"));
    args << QStringLiteral("--events-stdout") << QStringLiteral("--parallel-runs") << QStringLiteral("1");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::SeparateChannels);
    cli.start(QStringLiteral(WB_CLI_PATH), args);
    QVERIFY(cli.waitForStarted());
    std::vector<json> events;
    const auto variantRuns = [](const json& e) {
      return e.value("type", "") == "phase" && e.value("phase", "") == "the variant's runs to the target";
    };
    QVERIFY2(wb::test::readEvents(cli, events, variantRuns, 400000), cli.readAllStandardError().constData());
    // Cut the variant's first run while it trains: the run ends "cancelled", which is the try's cancel.
    QElapsedTimer waited;
    waited.start();
    const auto variantTraining = [&] {
      for (const QString& d : QDir(out + QStringLiteral("/runs")).entryList({QStringLiteral("variant-seed-*")}, QDir::Dirs))
        if (wb::test::trainingIn(out + QStringLiteral("/runs/") + d)) return true;
      return false;
    };
    while (!variantTraining() && waited.elapsed() < 120000 && cli.state() == QProcess::Running) QTest::qWait(50);
    QVERIFY2(variantTraining(), "the variant's first run never trained");
    cli.terminate();
    QVERIFY(cli.waitForFinished(120000));
    wb::test::readEvents(cli, events, [](const json&) { return false; }, 1000);
    QCOMPARE(cli.exitCode(), 130);
    std::map<std::string, json> phases;
    for (const auto& e : events)
      if (e.value("type", "") == "phase") phases[e.value("phase", "")] = e;
    QVERIFY2(phases.count("the experiment's reference runs"), "no phase event for the reference runs");
    QCOMPARE(phases["the experiment's reference runs"]["total"].get<int>(), 3);
    QCOMPARE(phases["the experiment's reference runs"]["done"].get<int>(), 3);
    QCOMPARE(phases["the variant's runs to the target"]["total"].get<int>(), 3);
    QVERIFY(!events.empty());
    QCOMPARE(events.back().value("type", ""), std::string("end"));
    QCOMPARE(events.back().value("status", ""), std::string("cancelled"));
    const json doc = readJson(out + QStringLiteral("/try.json"));
    QCOMPARE(doc.value("status", ""), std::string("cancelled"));
    const json kept = doc.value("kept", json::array());
    QVERIFY2(kept.dump().find("the math check") != std::string::npos && kept.dump().find("3 of 3 reference runs") != std::string::npos,
             doc.dump().c_str());
  }
};

QTEST_GUILESS_MAIN(TestCliTryParts)
#include "test_cli_try_parts.moc"
