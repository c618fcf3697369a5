// The ladder's loop: rounds of rungs, each a launched run loaded back into its step, the outputs
// rewritten after each, and the ladder's events (wb/ladder/ladder_run.h) beside the human log.
#include "wb/ladder/ladder_run.h"

#include <cmath>
#include <cstdarg>

#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/launch/launcher.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/report/export.h"

namespace wb::ladder {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One ladder in progress: the steps' runs so far, its clock, where its words and events go.
class LadderRun {
 public:
  explicit LadderRun(const LadderOptions& o) : o_(o) {
    for (const auto& s : o.plan) steps_.push_back({s, {}, {}});
  }

  Result<LadderOutcome> run();

 private:
  bool stopped() const { return o_.stop && o_.stop->load(); }
  void say(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void emit(json ev) const {
    if (o_.on_event) o_.on_event(ev);
  }
  template <class E>
  json toEvent(const E& e) const { return proto::toEvent(e, -1, clock_.seconds()); }
  json planJson() const;
  bool measure(size_t i, int round, const std::string& suffix);
  void runOnce(size_t i, int round, const fs::path& runDir);
  void noteRungEnd(size_t i, int round, const fs::path& runDir, const std::string& status, const std::string& error);
  void writeOutputs();
  bool anyStepFailed() const;

  const LadderOptions& o_;
  std::vector<report::LadderStepRuns> steps_;
  Stopwatch clock_;
  Status written_;
  bool pngWarned_ = false;
};

void LadderRun::say(const char* fmt, ...) const {
  if (!o_.log) return;
  va_list args;
  va_start(args, fmt);
  std::vfprintf(o_.log, fmt, args);
  va_end(args);
}

json LadderRun::planJson() const {
  json steps = json::array();
  for (size_t i = 0; i < steps_.size(); ++i) {
    const auto& s = steps_[i].step;
    steps.push_back({{"index", i}, {"key", s.key}, {"added", s.added}, {"skipped", s.skipped}, {"note", s.note},
                     {"isolated", s.isolated}});
  }
  return steps;
}

void LadderRun::writeOutputs() {
  if (!written_.ok()) return;
  std::string png;
  written_ = writeLadderOutputs(o_.out, report::summarizeLadder(steps_, o_.target_acc), steps_, &png);
  if (png.empty() || pngWarned_) return;
  pngWarned_ = true;  // once: the same reason every time
  say("  warning: %s\n", png.c_str());
  emit(toEvent(proto::WarningEvent{png, std::nullopt}));
}

void LadderRun::noteRungEnd(size_t i, int round, const fs::path& runDir, const std::string& status,
                            const std::string& error) {
  proto::RungEndEvent ev;
  ev.index = static_cast<int64_t>(i);
  ev.key = steps_[i].step.key;
  ev.round = round;
  ev.run_dir = runDir.string();
  ev.status = status;
  if (!error.empty()) ev.error = error;
  if (status != "not-started" && !steps_[i].runs.empty()) {
    const auto m = report::computeMetrics(steps_[i].runs.back(), std::nullopt);
    ev.wall_s = m.wall_s.value_or(proto::kUnknown);  // null: not known
    ev.best_val_acc = m.best_val_acc.value_or(proto::kUnknown);
    ev.contended = m.contention.contended;
    say("    %s in %s, best val acc %s\n", status.c_str(), m.wall_s ? report::fmtSeconds(*m.wall_s).c_str() : "?",
        m.best_val_acc ? report::fmtAccuracy(*m.best_val_acc).c_str() : "–");
  }
  emit(toEvent(ev));
}

// One run of step i: launched, then loaded back from its folder.
void LadderRun::runOnce(size_t i, int round, const fs::path& runDir) {
  auto& step = steps_[i];
  emit(toEvent(proto::RungStartEvent{static_cast<int64_t>(i), static_cast<int64_t>(steps_.size()), step.step.key,
                                     step.step.added, round, runDir.string()}));
  launch::LaunchOptions lo;
  lo.cli_path = o_.cli_path;
  lo.run_dir = runDir.string();
  lo.overwrite = true;  // rung folders are the ladder's own: a ladder run again into --out measures afresh
  lo.on_event = [this](const json& ev) {
    if (proto::isEvent<proto::EvalEvent>(ev) && proto::intOr(ev, "rank", 0) == 0) {
      const proto::EvalEvent e = proto::readEvalEvent(ev);
      say("    epoch %d  val acc %.2f %%  (%.1f s)\n", e.epoch, 100.0 * (std::isfinite(e.val_acc) ? e.val_acc : 0.0),
          proto::numberOr(ev, "t", 0.0));
    } else if (proto::isEvent<proto::ErrorEvent>(ev)) {
      say("    error: %s\n", proto::readErrorEvent(ev).message.c_str());
    }
  };
  // The run's name says which step it is, so the window's run list and `compare` tell them apart.
  Config config = step.step.config;
  config.name += " / " + runDir.filename().string();
  auto outcome = launch::launchRun(config, lo);
  if (!outcome.ok()) {
    step.failures.push_back(runDir.filename().string() + " could not start: " + outcome.error().message);
    say("    could not start: %s\n", outcome.error().message.c_str());
    noteRungEnd(i, round, runDir, "not-started", outcome.error().message);
    return;
  }
  auto rec = report::loadRun(runDir);
  if (!rec.ok()) {
    step.failures.push_back(rec.error().message);
    noteRungEnd(i, round, runDir, "not-started", rec.error().message);
    return;
  }
  step.runs.push_back(std::move(rec.value()));
  noteRungEnd(i, round, runDir, outcome->status, {});
}

// Runs step i once in round r (its folder "NN-key[-rR][suffix]") and rewrites the outputs; true
// when that run was measured under contention.
bool LadderRun::measure(size_t i, int round, const std::string& suffix) {
  auto& step = steps_[i];
  say("[%zu/%zu%s] %s: %s%s\n", i + 1, steps_.size(), o_.repeats > 1 ? (", round " + std::to_string(round)).c_str() : "",
      step.step.key.c_str(), step.step.added.c_str(), step.step.skipped ? (" — skipped: " + step.step.note).c_str() : "");
  if (step.step.skipped) return false;
  std::string name = step.step.slug(static_cast<int>(i));
  if (o_.repeats > 1) name += "-r" + std::to_string(round);
  const size_t before = step.runs.size();
  runOnce(i, round, o_.out / "runs" / (name + suffix));
  writeOutputs();
  return step.runs.size() > before && report::computeMetrics(step.runs.back(), std::nullopt).contention.contended;
}

bool LadderRun::anyStepFailed() const {
  for (const auto& step : steps_) {
    bool ok = step.step.skipped;
    for (const auto& rec : step.runs) ok = ok || rec.status == proto::kStatusOk || rec.status == proto::kStatusEarlyStopped;
    if (!ok) return true;
  }
  return false;
}

Result<LadderOutcome> LadderRun::run() {
  emit(toEvent(proto::LadderEvent{o_.out.string(), o_.repeats, planJson()}));
  for (int r = 1; r <= o_.repeats && !stopped() && written_.ok(); ++r) {
    std::vector<size_t> contended;
    for (size_t i = 0; i < steps_.size() && !stopped(); ++i)
      if (measure(i, r, "")) contended.push_back(i);
    for (int again = 1; again <= o_.rerun_contended && !contended.empty() && !stopped(); ++again) {
      std::vector<size_t> still;
      for (size_t i : contended) {
        if (stopped()) break;
        say("  %s was measured under contention: once more\n", steps_[i].step.key.c_str());
        if (measure(i, r, "-again" + (again > 1 ? std::to_string(again) : std::string()))) still.push_back(i);
      }
      contended = std::move(still);
    }
  }
  if (!written_.ok()) return written_.error();
  LadderOutcome out;
  out.ladder = report::summarizeLadder(steps_, o_.target_acc);
  writeOutputs();
  if (!written_.ok()) return written_.error();
  out.cancelled = stopped();
  out.failed = !out.cancelled && anyStepFailed();
  emit(toEvent(proto::LadderEndEvent{
      out.cancelled ? proto::kStatusCancelled : out.failed ? proto::kStatusFailed : proto::kStatusOk, o_.out.string(),
      report::ladderJson(out.ladder)}));
  return out;
}

}  // namespace

Status writeLadderOutputs(const fs::path& out, const report::Ladder& ladder, const std::vector<report::LadderStepRuns>& steps,
                          std::string* png_problem) {
  std::vector<const report::RunRecord*> runs;  // the advisor reads each step's stored worker probe
  for (const auto& s : steps)
    for (const auto& r : s.runs) runs.push_back(&r);
  const report::Report rep = report::buildLadderReport(ladder, steps, report::loadProbesFor(runs));
  for (auto f : {report::Format::Markdown, report::Format::Csv, report::Format::Latex, report::Format::Json, report::Format::Html})
    if (auto st = report::writeReport(rep, f, out / (std::string("ladder.") + report::formatExtension(f))); !st.ok()) return st;
  const report::Drawing& chart = rep.figures.front().drawing;
  if (auto st = writeFileAtomic(out / "ladder.svg", report::toSvg(chart)); !st.ok()) return st;
  // Twice the SVG's pixel size: crisp on high-DPI screens.
  if (auto st = svgToPng(out / "ladder.svg", out / "ladder.png", 2.0); !st.ok() && png_problem)
    *png_problem = st.error().message;
  return {};
}

Result<LadderOutcome> runLadder(const LadderOptions& options) { return LadderRun(options).run(); }

}  // namespace wb::ladder
