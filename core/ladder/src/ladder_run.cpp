// The ladder on the paired runner: the plan becomes a reference (the baseline) and variants (the
// steps that run), the runner's outcome becomes the steps' runs, and after each pair the outputs
// are rewritten. The ladder's own events (wb/ladder/ladder_run.h) come before and after the
// runner's.
#include "wb/ladder/ladder_run.h"

#include <algorithm>

#include "ladder_greedy.h"

#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/command_template.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/probe/record.h"
#include "wb/report/export.h"
#include "wb/render/svg_png.h"
#include "wb/proto/record_files.h"

namespace wb::ladder {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class LadderRun {
 public:
  explicit LadderRun(const LadderOptions& o) : o_(o) {}
  Result<LadderOutcome> run();

 private:
  void emit(const json& ev) const {
    o_.hooks.emit(ev);
  }
  template <class E>
  json toEvent(const E& e) const { return proto::toEvent(e, -1, clock_.seconds()); }
  experiment::Plan runnerPlan() const;
  std::vector<LadderStepRuns> stepsOf(const experiment::Outcome& o) const;
  LadderStatus statusOf(const experiment::Outcome& o) const;
  void writeOutputs(const experiment::Outcome& o);

  const LadderOptions& o_;
  Stopwatch clock_;
  Status written_;
  bool pngWarned_ = false;
};

// The baseline is the reference; every other step that runs is a variant paired with it.
experiment::Plan LadderRun::runnerPlan() const {
  experiment::Plan p;
  p.steps = static_cast<int>(o_.plan.size());
  p.user_command = o_.user_command;
  for (size_t i = 0; i < o_.plan.size(); ++i) {
    const LadderStep& s = o_.plan[i];
    experiment::Arm arm{s.key, s.added, s.slug(static_cast<int>(i)), static_cast<int>(i), s.config};
    if (s.key == "baseline") p.reference = arm;
    else if (!s.skipped) p.variants.push_back(arm);
  }
  return p;
}

std::vector<LadderStepRuns> LadderRun::stepsOf(const experiment::Outcome& o) const {
  std::vector<LadderStepRuns> steps;
  for (const auto& s : o_.plan) steps.push_back({s, {}, {}, {}, {}, {}, false});
  auto stepOf = [&](const std::string& key) -> LadderStepRuns* {
    for (auto& s : steps)
      if (s.step.key == key && !s.step.skipped) return &s;
    return nullptr;
  };
  LadderStepRuns* base = stepOf("baseline");
  if (base) base->runs = o.lone_reference;
  for (const auto& v : o.variants) {
    LadderStepRuns* s = stepOf(v.arm.key);
    if (!s) continue;
    s->runs = v.variants;
    s->references = v.references;
    for (size_t i = 0; i < v.pairs.size(); ++i) s->counted.push_back(v.counted(i));
    s->failures = v.failures;
    s->settled = v.settled;
    s->not_run = o.cancelled && v.pairs.empty();
    if (base) base->runs.insert(base->runs.end(), v.references.begin(), v.references.end());
  }
  if (base) base->not_run = o.cancelled && base->runs.empty();
  return steps;
}

LadderStatus LadderRun::statusOf(const experiment::Outcome& o) const {
  if (o.cancelled) return {proto::kStatusCancelled, o.cancelled_at};
  return {o.failed ? proto::kStatusFailed : proto::kStatusOk, ""};
}

void LadderRun::writeOutputs(const experiment::Outcome& o) {
  if (!written_.ok()) return;
  const auto steps = stepsOf(o);
  LadderStatus status = statusOf(o);
  if (status.status == proto::kStatusOk) status.status = "running";  // until the runner returns
  std::string png;
  written_ = writeLadderOutputs(o_.out, summarizeLadder(steps, o_.policy.target_acc, o_.policy.sequential(), status), steps, &png);
  if (png.empty() || pngWarned_) return;
  pngWarned_ = true;  // once: the same reason every time
  if (o_.hooks.log) std::fprintf(o_.hooks.log, "  warning: %s\n", png.c_str());
  emit(toEvent(proto::WarningEvent{png, std::nullopt}));
}

Result<LadderOutcome> LadderRun::run() {
  if (auto st = experiment::keepUnreadableResult(o_.out / proto::kLadderFile, o_.hooks); !st.ok()) return st.error();
  emit(toEvent(proto::LadderEvent{o_.out.string(), o_.policy.fixed_pairs, planEventSteps(o_.plan)}));
  experiment::Hooks hooks = o_.hooks;
  hooks.on_pair = [this](const experiment::Outcome& o) { writeOutputs(o); };
  const experiment::Plan plan = runnerPlan();
  auto outcome = experiment::runPairs(plan, o_.policy, o_.out, hooks);
  if (!outcome.ok()) return outcome.error();
  if (!written_.ok()) return written_.error();
  const auto steps = stepsOf(*outcome);
  LadderOutcome out;
  out.ladder = summarizeLadder(steps, o_.policy.target_acc, o_.policy.sequential(), statusOf(*outcome));
  std::string png;
  if (auto st = writeLadderOutputs(o_.out, out.ladder, steps, &png); !st.ok()) return st.error();
  out.cancelled = outcome->cancelled;
  out.failed = outcome->failed;
  out.resumed = outcome->resumed;
  emit(toEvent(proto::LadderEndEvent{out.ladder.status, o_.out.string(), ladderJson(out.ladder), out.ladder.answer}));
  return out;
}

}  // namespace

json planEventSteps(const std::vector<LadderStep>& plan) {
  json steps = json::array();
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& s = plan[i];
    steps.push_back({{"index", i}, {"key", s.key}, {"added", s.added}, {"skipped", s.skipped}, {"note", s.note},
                     {"isolated", s.isolated}});
  }
  return steps;
}

Status writeLadderOutputs(const fs::path& out, const Ladder& ladder, const std::vector<LadderStepRuns>& steps,
                          std::string* png_problem) {
  // The advisor reads each step's stored worker probe.
  const report::Report rep = ladder::buildLadderReport(ladder, steps, probe::storedWorkersAdvice());
  for (auto f : {report::Format::Markdown, report::Format::Csv, report::Format::Latex, report::Format::Json, report::Format::Html})
    if (auto st = report::writeReport(rep, f, out / (std::string("ladder.") + report::formatExtension(f))); !st.ok()) return st;
  const render::Drawing& chart = rep.figures.front().drawing;
  if (auto st = writeFileAtomic(out / "ladder.svg", render::toSvg(chart)); !st.ok()) return st;
  // Twice the SVG's pixel size: crisp on high-DPI screens.
  if (auto st = render::svgToPng(out / "ladder.svg", out / "ladder.png", 2.0); !st.ok() && png_problem)
    *png_problem = st.error().message;
  return {};
}

void skipUnmeasurable(std::vector<LadderStep>& plan, const experiment::UserCommand& command, bool greedy) {
  if (!command.set()) return;
  const auto base = std::find_if(plan.begin(), plan.end(), [](const LadderStep& s) { return s.key == "baseline"; });
  if (base == plan.end()) return;
  const Config baseline = base->config;
  for (LadderStep& s : plan) {
    if (s.key == "baseline" || s.skipped) continue;
    const Config to = greedy && !s.isolated ? withSpeedupOf(baseline, s.config, s.key) : s.config;
    if (std::string why = proto::notMeasurableWith(command.text, baseline, to); !why.empty())
      s.skipped = true, s.note = std::move(why);
  }
}

Result<LadderOutcome> runLadder(const LadderOptions& given) {
  LadderOptions options = given;
  skipUnmeasurable(options.plan, options.user_command, options.greedy);
  if (options.greedy) return runGreedyLadder(options);
  std::error_code ec;
  if (fs::exists(options.out / proto::kPlanFile, ec))
    return makeError(Errc::InvalidConfig, options.out.string() + " holds a greedy ladder: continue it without --cumulative, "
                                                                 "or choose a new --out");
  return LadderRun(options).run();
}

}  // namespace wb::ladder
