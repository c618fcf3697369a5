// What the search hands over: best.json, the same settings for torchrun and for Lightning, and
// the tables (tune.md, tune.html).
#include <algorithm>
#include <cmath>

#include "wb/common/format.h"
#include "wb/compare/answer.h"
#include "wb/common/fs.h"
#include "wb/common/lr_scaling.h"
#include "wb/common/speedups.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/stats/estimate_json.h"
#include "wb/report/export.h"
#include "wb/tune/tune.h"
#include "wb/proto/record_files.h"

namespace wb::tune {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lrWords(const Config& c) {
  const LrScaling s = lrScaling(c.optim, c.speedups.devices, 0, c.train.batch_size);
  if (s.factor == 1.0) return "lr " + shortNumber(s.effective_lr);
  return "lr " + shortNumber(s.effective_lr) + " (" + s.note + ")";
}

// The settings, one line each: the batch and the lr, then every speedup's line in PyTorch's terms.
std::string settingsComment(const Config& c) {
  std::string s = "# The settings `workbench-cli tune` picked for " + c.name + ":\n";
  s += "#   per-rank batch " + std::to_string(c.train.batch_size) + " on " + std::to_string(c.speedups.devices) +
       " process(es), " + lrWords(c) + "\n";
  for (const Speedup& sp : speedupTable())
    if (const std::string line = sp.pytorch ? sp.pytorch(c) : ""; !line.empty()) s += "#   " + line + "\n";
  return s;
}

render::Table trialsTable(const proto::TuneRecord& r) {
  render::Table t;
  t.title = "Trials";
  t.columns = {{"candidate", "Candidate", ""}, {"label", "Settings", ""}, {"round", "Round", ""},
               {"train_samples_per_s", "Train samples/s", "1/s"}, {"eval_images_per_s", "Eval images/s", "1/s"},
               {"epoch_s", "Epoch estimate", "s"}, {"status", "Status", ""}, {"promoted", "Went on", ""}};
  for (const auto& tr : r.trials) {
    const std::string label = candidateLabel(r, tr.candidate);
    std::string promoted = "no";
    for (const auto& g : r.rungs)
      if (g.rung == tr.rung && std::find(g.candidates.begin(), g.candidates.end(), tr.candidate) != g.candidates.end() &&
          std::find(g.promoted.begin(), g.promoted.end(), tr.candidate) != g.promoted.end() && (tr.stage == "eval") == (g.why.rfind("evaluation", 0) == 0))
        promoted = "yes";
    t.rows.push_back({render::Cell::str(tr.candidate), render::Cell::str(label), render::Cell::str(tr.stage + std::to_string(tr.rung)),
                      render::optCell(tr.train_samples_per_s, wb::fmtRate), render::optCell(tr.eval_images_per_s, wb::fmtRate),
                      render::optCell(tr.epoch_s, wb::fmtSeconds),
                      render::Cell::str(tr.status + (tr.contended ? " (contended)" : "") + (tr.error.empty() ? "" : ": " + tr.error.substr(0, 120))),
                      render::Cell::str(promoted)});
  }
  for (const auto& g : r.rungs) t.notes.push_back("round " + std::to_string(g.rung) + " (" + std::to_string(g.samples) + " training images each): " + g.why);
  t.notes.push_back("Ranked on " + r.objective + ".");
  return t;
}

// A finalist's figure in the answers' words (compare::figureWithReading), "–" when it has none.
std::string estimateText(const json& e) {
  if (!e.is_object() || !e.contains("point") || !e["point"].is_number()) return "–";
  return compare::figureWithReading(stats::estimateFromJson(e));
}

// best-command.sh: the user's command with the best's settings.
std::string userCommand(const std::string& tmpl, const Config& c) {
  const std::string marker = "@RUN_DIR@";
  const auto expanded = proto::expandCommand(tmpl, c, marker);
  std::string line = expanded.ok() ? *expanded : "# " + expanded.error().message;
  for (size_t at = line.find("'" + marker + "'"); at != std::string::npos; at = line.find("'" + marker + "'", at))
    line.replace(at, marker.size() + 2, "\"${1:-best-run}\"");
  return "#!/bin/sh\n# The best settings as your own command (tune --command); the run folder is $1, else best-run.\n" + line + "\n";
}

}  // namespace

std::optional<Config> bestConfig(const proto::TuneRecord& r) {
  if (r.best.empty()) return std::nullopt;
  auto c = candidateConfig(r, r.best);
  if (!c.ok()) return std::nullopt;
  c->name += r.best == "baseline" ? " (kept by tune: the config as given)" : " (tune's pick)";
  return *c;
}

std::string torchrunCommand(const Config& c) {
  std::string s = "#!/bin/sh\n" + settingsComment(c);
  s += "# A PyTorch script of yours, under torchrun (its own flags for the settings above):\n";
  s += "# torchrun --standalone --nproc-per-node " + std::to_string(c.speedups.devices) + " train.py --batch-size " +
       std::to_string(c.train.batch_size) + " ...\n";
  s += "# The workbench's own worker, the same settings (best.json beside this file):\n";
  s += "exec torchrun --standalone --no-python --nproc-per-node " + std::to_string(c.speedups.devices) +
       " workbench-cli worker --config \"$(dirname \"$0\")/best.json\" --run-dir \"${1:-best-run}\"\n";
  return s;
}

namespace {
std::string shellQuoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}
}  // namespace

std::string sbatchScript(const Config& c, const fs::path& bestJson) {
  const std::string n = std::to_string(c.speedups.devices);
  std::string s = "#!/bin/bash\n" + settingsComment(c);
  s += "# Under Slurm: `sbatch best-sbatch.sh [RUN_DIR]` runs " + n + " task(s) of the workbench's own worker on the\n"
       "# nodes Slurm gives. Add --partition, --account, --time and, on GPUs, --gres=gpu:N (as #SBATCH lines\n"
       "# here or on sbatch's command line). RUN_DIR (default best-run, where you submit) and best.json must be\n"
       "# on a filesystem every node sees; WB_BEST_JSON overrides best.json's path.\n";
  s += "#SBATCH --job-name=workbench-best\n#SBATCH --ntasks=" + n + "\n#SBATCH --output=workbench-best-%j.out\n";
  s += "set -eu\n";
  s += "# The rendezvous: rank 0 runs on the job's first node; the port is drawn from the job id.\n";
  s += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s += "MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n";
  s += "export MASTER_ADDR MASTER_PORT\n";
  s += "BEST_JSON=${WB_BEST_JSON:-" + shellQuoted(bestJson.string()) + "}\n";
  s += "exec srun workbench-cli worker --config \"$BEST_JSON\" --run-dir \"${1:-best-run}\"\n";
  return s;
}

std::string lightningArguments(const Config& c) {
  std::vector<std::string> trainer, loader, comments;
  for (const Speedup& sp : speedupTable()) {
    if (!sp.lightning) continue;
    const LightningSetting l = sp.lightning(c);
    trainer.insert(trainer.end(), l.trainer.begin(), l.trainer.end());
    loader.insert(loader.end(), l.loader.begin(), l.loader.end());
    if (!l.comment.empty()) comments.push_back(l.comment);
  }
  std::string s = settingsComment(c);
  s += "# The same settings as PyTorch Lightning arguments:\n";
  s += "import lightning as L\n\n";
  s += "trainer = L.Trainer(\n";
  for (const std::string& kw : trainer) s += "    " + kw + ",\n";
  s += "    max_epochs=" + std::to_string(c.train.epochs) + ",\n)\n";
  for (const std::string& line : comments) s += "# " + line + "\n";
  std::string loaderArgs;
  for (const std::string& kw : loader) loaderArgs += ", " + kw;
  s += "train_loader = DataLoader(train_set, batch_size=" + std::to_string(c.train.batch_size) + ", shuffle=True" + loaderArgs + ")\n";
  s += "val_loader = DataLoader(val_set, batch_size=" + std::to_string(c.train.eval_batch_size) + loaderArgs + ")\n";
  s += "# optimizer " + c.optim.name + ", " + lrWords(c) + "\n";
  return s;
}

render::Table finalsTable(const proto::TuneRecord& r) {
  render::Table t;
  t.title = "Finals: time to " + (r.target_acc ? wb::fmtAccuracy(*r.target_acc) : std::string("the target")) + " against the config as given";
  t.columns = {{"candidate", "Candidate", ""}, {"label", "Settings", ""}, {"pairs", "Pairs", ""},
               {"to_target", "Speedup to target", "x"}, {"throughput", "Train samples/s speedup", "x"},
               {"vs_best", "The best against it", "x"}, {"verdict", "Verdict", ""}};
  bool byParts = false;
  for (const auto& f : r.finals) {
    byParts = byParts || f.method == "composed";
    t.rows.push_back({render::Cell::str(f.candidate), render::Cell::str(f.label),
                      f.method == "composed" ? render::Cell::str("by parts") : render::Cell::num(std::to_string(f.pairs), f.pairs),
                      render::Cell::str(estimateText(f.estimate.value("to_target", json()))),
                      render::Cell::str(estimateText(f.estimate.value("throughput", json()))),
                      render::Cell::str(estimateText(f.vs_best)), render::Cell::str(f.verdict)});
  }
  if (!r.note.empty()) t.notes.push_back(r.best.empty() || r.best == "baseline" ? r.note : "Best, " + r.best_label + ": " + r.note + ".");
  for (const auto& f : r.finals)
    if (!f.words.empty()) t.notes.push_back(f.candidate + ": " + f.words + " (" + f.dir + "/" + proto::kTryFile + ").");
  if (!r.cannot_tell.empty()) {
    std::string ids;
    for (const auto& id : r.cannot_tell) ids += (ids.empty() ? "" : ", ") + id;
    t.notes.push_back("Cannot be told from the best on time to target: " + ids + ".");
  }
  if (byParts)
    t.notes.push_back("By parts: each finalist's time to target composed from its throughput (segments or short trials), its "
                      "evaluation and its samples to target (the experiment's reference runs); \"the best against it\" is the "
                      "ratio of two composed estimates, their uncertainties added.");
  else
    t.notes.push_back("Each speedup is the geometric mean of its pairs' ratios with its interval; \"the best against it\" compares "
                      "two finalists through their own pairs' reference runs, round by round.");
  return t;
}

report::Report tuneReport(const proto::TuneRecord& r) {
  report::Report rep;
  rep.title = "Tune: " + (r.best_label.empty() ? std::string("no pick yet") : "best " + r.best_label);
  rep.intro = "Searched " + std::to_string(r.candidates.size() - 1) + " configurations: " + std::to_string(r.trials.size()) +
              " short trials (" + wb::fmtSeconds(r.trials_s) + "), then the finalists to the target " +
              (std::any_of(r.finals.begin(), r.finals.end(), [](const proto::TuneFinalist& f) { return f.method == "composed"; })
                   ? "by parts ("
                   : "as pairs (") +
              wb::fmtSeconds(r.finals_s) + "). Status: " + r.status + "." +
              (r.run_command.empty() ? "" : " Every run was your command: `" + r.run_command + "`.") +
              (r.left_out.empty() ? "" : " Left out of the search: " + r.left_out + ".");
  rep.answer = r.answer.empty() ? tuneAnswer(r) : r.answer;
  rep.short_table = tuneAnswerTable(r);
  rep.tables = {finalsTable(r), trialsTable(r)};
  rep.data = proto::toJson(r);
  return rep;
}

Status writeTuneOutputs(const fs::path& out, const proto::TuneRecord& r) {
  if (auto st = writeFileAtomic(out / proto::kTuneFile, proto::toJson(r).dump(2) + "\n"); !st.ok()) return st;
  if (r.status == "running") return {};
  const report::Report rep = tuneReport(r);
  if (auto st = writeFileAtomic(out / "tune.md", report::renderMarkdown(rep)); !st.ok()) return st;
  if (auto st = writeFileAtomic(out / "tune.html", report::renderHtml(rep)); !st.ok()) return st;
  const auto best = bestConfig(r);
  if (!best || r.status != "ok") return {};
  if (auto st = writeFileAtomic(out / proto::kBestConfigFile, proto::configToJson(*best).dump(2) + "\n"); !st.ok()) return st;
  if (auto st = writeFileAtomic(out / "best-torchrun.sh", torchrunCommand(*best)); !st.ok()) return st;
  if (auto st = writeFileAtomic(out / "best-sbatch.sh", sbatchScript(*best, fs::absolute(out / proto::kBestConfigFile))); !st.ok())
    return st;
  if (!r.run_command.empty())
    if (auto st = writeFileAtomic(out / "best-command.sh", userCommand(r.run_command, *best)); !st.ok()) return st;
  return writeFileAtomic(out / "best-lightning.py", lightningArguments(*best));
}

}  // namespace wb::tune
