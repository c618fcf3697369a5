// The ladder's plan: the baseline every step starts from and the speedups added in turn, each
// with its availability on this machine (from capabilities) and the stored worker probe.
#include "wb/ladder/ladder.h"

#include <algorithm>
#include <optional>

#include "wb/common/choices.h"
#include "wb/common/speedups.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/capabilities_record.h"
#include "wb/proto/config_json.h"
#include "wb/advice/workers_advice.h"

namespace wb::ladder {
using namespace advice;
using namespace report;
using namespace stats;   // estimates, verdicts and the rounds rule
using namespace render;  // tables and charts
using nlohmann::json;

namespace {

struct Planner {
  proto::Capabilities caps;
  Here here;
  Config base, cum;
  std::vector<LadderStep> steps;
  std::vector<LadderStep> alone;  // isolated variants
  bool isolated;

  // Adds a cumulative step (and its isolated twin) or a skipped one.
  void add(const Speedup& s, const std::string& skipReason) {
    LadderStep step;
    step.key = s.key;
    Config shown = cum;
    s.on(shown, here);
    step.added = stepWords(s, cum, shown, here);
    if (!skipReason.empty()) {
      step.skipped = true;
      step.note = skipReason;
      step.config = cum;
      steps.push_back(step);
      return;
    }
    step.note = s.caveat ? s.caveat(shown, here) : "";
    cum = shown;
    step.config = cum;
    steps.push_back(step);
    if (!isolated) return;
    LadderStep a = step;
    a.isolated = true;
    a.config = base;
    s.on(a.config, here);
    a.added = stepWords(s, base, a.config, here) + " (alone)";
    alone.push_back(a);
  }

  // The value `on` gives it here, as its capability's value key ("bf16-mixed"); "" when not a string.
  std::string valueOn(const Speedup& s) const {
    Config c = cum;
    s.on(c, here);
    const json v = proto::configToJson(c)["speedups"][s.key];
    return v.is_string() ? v.get<std::string>() : "";
  }

  // Why it cannot run here: the machine lacks it, its value is emulated, or it cannot help the
  // config as built so far; "" when it can.
  std::string skipReason(const Speedup& s) const {
    const bool cudaOk = s.availability != Availability::NeedsCuda || here.cuda;
    const std::string value = valueOn(s);
    const proto::ValueCapability* v = s.availability == Availability::PerChoice ? caps.value(s.key, value) : nullptr;
    const auto noteOr = [&](const std::string& fallback) { return v && !v->note.empty() ? v->note : fallback; };
    if (v ? !v->available : !caps.available(s.key, cudaOk))
      return v ? noteOr(value + " is not available on this machine")
               : caps.note(s.key, cudaOk ? std::string(s.label) + " is not available on this machine" : withoutWhatItNeeds(s));
    // An emulated value (bf16 without AVX-512 BF16 / AMX) only slows a run down, and every later
    // cumulative step would carry that: the ladder says so instead of spending the time.
    if (v && v->native && !*v->native)
      return noteOr(value + " is emulated on this CPU") + " (try it alone: workbench-cli run --set " + s.config_path + "=" + value + ")";
    return s.cannotHelp ? s.cannotHelp(cum, here) : "";
  }
};

// What this machine offers the speedups: capabilities, and the stored worker probe for this
// experiment (speedups.workers.probe, attached by the caller) else the rule of thumb, as the
// advisor says it.
Here hereOf(const json& capsDoc, const proto::Capabilities& caps) {
  const auto maxOf = [&caps](const char* key) -> std::optional<int> {
    const proto::SpeedupCapability* s = caps.speedup(key);
    return s ? s->max : std::nullopt;
  };
  Here h;
  h.cuda = caps.cuda;
  h.cores = caps.cores;
  const WorkersAdvice advice = advice::workersAdvice(capsDoc);
  h.workers = advice.workers;
  if (auto max = maxOf(speedup::kWorkers)) h.workers = std::min(h.workers, std::max(advice.measured ? 0 : 1, *max));
  h.workers_measured = advice.measured;
  h.workers_source = advice.source();
  h.devices = caps.cuda ? caps.gpus : 2;
  if (auto max = maxOf(speedup::kDevices)) h.devices = std::min(h.devices, *max);
  h.mixed_precision = caps.cuda ? choice::kFp16Mixed : choice::kBf16Mixed;
  return h;
}

}  // namespace

std::string LadderStep::slug(int index) const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d-", index);
  std::string k = key;
  std::replace(k.begin(), k.end(), '_', '-');
  return isolated ? "alone-" + k : buf + k;
}

Config ladderBaseline(const Config& user) { return speedupsOff(user); }

Here ladderHere(const json& caps) { return hereOf(caps, proto::capabilitiesFromJson(caps)); }

std::vector<LadderStep> planLadder(const Config& user, const json& caps, bool isolated) {
  const proto::Capabilities typed = proto::capabilitiesFromJson(caps);
  Planner p{typed, hereOf(caps, typed), ladderBaseline(user), ladderBaseline(user), {}, {}, isolated};
  LadderStep baseline;
  baseline.key = "baseline";
  baseline.added = "all speedups off (workers 0, 32-true, 1 device)";
  baseline.config = p.base;
  p.steps.push_back(baseline);
  for (const Speedup& s : speedupTable())  // in the table's order, each as its descriptor says
    if (s.on) p.add(s, p.skipReason(s));
  std::vector<LadderStep> out = std::move(p.steps);
  out.insert(out.end(), p.alone.begin(), p.alone.end());
  return out;
}

}  // namespace wb::ladder
