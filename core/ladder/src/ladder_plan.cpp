// The ladder's plan: the baseline every step starts from and the speedups added in turn, each
// with its availability on this machine (from capabilities) and the stored worker probe.
#include "wb/ladder/ladder.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "wb/common/choices.h"
#include "wb/common/speedups.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/capabilities.h"
#include "wb/proto/config_json.h"
#include "wb/report/workers_advice.h"

namespace wb::ladder {
using namespace report;  // records, metrics, tables and charts
using nlohmann::json;

namespace {

constexpr int kLadderPatience = 2;  // the recipe's early-stopping patience (in evaluations)

struct Planner {
  const json& capsDoc;             // as given (the stored probe's advice reads it)
  proto::Capabilities caps;        // the same, typed
  Config base, cum;
  std::vector<LadderStep> steps;
  std::vector<LadderStep> alone;  // isolated variants
  bool isolated;

  // Adds a cumulative step (and its isolated twin) or a skipped one.
  void add(const std::string& key, const std::string& added, const std::string& skipReason,
           const std::function<void(Config&, const Planner&)>& apply, std::string caveat = {}) {
    LadderStep s;
    s.key = key;
    s.added = added;
    if (!skipReason.empty()) {
      s.skipped = true;
      s.note = skipReason;
      s.config = cum;
      steps.push_back(s);
      return;
    }
    apply(cum, *this);
    s.config = cum;
    s.note = caveat;
    steps.push_back(s);
    if (!isolated) return;
    LadderStep a = s;
    a.isolated = true;
    a.added = added + " (alone)";
    a.config = base;
    apply(a.config, *this);
    alone.push_back(a);
  }

  int gpus() const { return caps.gpus; }
  bool cuda() const { return caps.cuda; }
  int cores() const { return caps.cores; }
  std::optional<int> maxOf(const char* key) const {
    const proto::SpeedupCapability* s = caps.speedup(key);
    return s ? s->max : std::nullopt;
  }
  // The stored worker probe for this machine and experiment (speedups.workers.probe, attached
  // by the caller), else the rule of thumb: wb::report::workersAdvice, as the advisor says it.
  WorkersAdvice workersAdvice() const { return report::workersAdvice(capsDoc); }
  int workers() const {
    const WorkersAdvice a = workersAdvice();
    int w = a.workers;
    if (auto max = maxOf(speedup::kWorkers)) w = std::min(w, std::max(a.measured ? 0 : 1, *max));
    return w;
  }
  int devices() const {
    int d = cuda() ? gpus() : 2;
    if (auto max = maxOf(speedup::kDevices)) d = std::min(d, *max);
    return d;
  }
  std::string precision() const { return cuda() ? choice::kFp16Mixed : choice::kBf16Mixed; }
};

// The levers past the recipe's seven, each as its descriptor says: its value, skipped where this
// machine lacks what it needs or where it cannot help the config as built so far.
void addLevers(Planner& p) {
  for (const Speedup& lever : speedupTable()) {
    if (lever.control == Control::Own || !lever.on) continue;
    const bool here = p.caps.available(lever.key, lever.availability != Availability::NeedsCuda || p.cuda());
    std::string skip = here ? "" : p.caps.note(lever.key, withoutWhatItNeeds(lever));
    if (skip.empty() && lever.cannotHelp) skip = lever.cannotHelp(p.cum);
    Config shown = p.cum;
    lever.on(shown);
    p.add(lever.key, lever.setting(shown), skip, [on = lever.on](Config& c, const Planner&) { on(c); });
  }
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

std::vector<LadderStep> planLadder(const Config& user, const json& caps, bool isolated) {
  Planner p{caps, proto::capabilitiesFromJson(caps), ladderBaseline(user), ladderBaseline(user), {}, {}, isolated};
  const proto::Capabilities& c = p.caps;
  LadderStep baseline;
  baseline.key = "baseline";
  baseline.added = "all speedups off (workers 0, 32-true, 1 device)";
  baseline.config = p.base;
  p.steps.push_back(baseline);

  // workers
  {
    const int w = p.workers();
    const WorkersAdvice advice = p.workersAdvice();
    std::string skip = c.available(speedup::kWorkers) ? "" : c.note(speedup::kWorkers, "loader workers are not available");
    if (skip.empty() && advice.measured && w == 0)
      skip = advice.source() + " recommends 0 workers for this experiment on this machine";
    p.add(speedup::kWorkers, w > 0 ? "loader workers 0 → " + std::to_string(w) : "loader workers: 0 recommended, as the baseline", skip,
          [](Config& c, const Planner& pl) { c.speedups.workers = pl.workers(); },
          advice.measured ? "workers from " + advice.source() + " (the smallest count the fastest is not clearly faster than)"
                          : "workers from " + advice.source() + "; run `workbench-cli probe workers` to measure the best count");
  }
  // pin memory: CUDA only
  {
    p.add(speedup::kPinMemory, "pin memory",
          c.available(speedup::kPinMemory, p.cuda()) ? "" : c.note(speedup::kPinMemory, "needs CUDA; not available on this machine"),
          [](Config& c, const Planner&) { c.speedups.pin_memory = true; });
  }
  // devices
  {
    const int d = p.devices();
    std::string skip;
    if (!c.available(speedup::kDevices)) skip = c.note(speedup::kDevices, "more devices are not available");
    else if (d < 2) skip = p.cuda() ? "only one GPU on this machine" : "this machine allows only one process per run";
    std::string kind = p.cuda() ? " GPUs" : " CPU processes";
    p.add(speedup::kDevices, "devices 1 → " + std::to_string(std::max(d, 2)) + kind, skip,
          [](Config& c, const Planner& pl) { c.speedups.devices = pl.devices(); },
          p.cuda() || p.cores() >= 2 * std::max(d, 1) ? "" : "the processes share " + std::to_string(p.cores()) + " cores");
  }
  // precision
  {
    const std::string prec = p.precision();
    const proto::ValueCapability* v = c.value(speedup::kPrecision, prec);
    const bool ok = v ? v->available : c.available(speedup::kPrecision);
    // Emulated bf16 (no AVX-512 BF16 / AMX) only slows a CPU run down, and every later cumulative
    // step would carry that: the ladder says so instead of spending the time.
    const bool emulated = v && v->native && !*v->native;
    const auto noteOr = [&](const std::string& fallback) { return v && !v->note.empty() ? v->note : fallback; };
    std::string skip = ok ? "" : noteOr(prec + " is not available on this machine");
    if (ok && emulated)
      skip = noteOr(prec + " is emulated on this CPU") +
             " (try it alone: workbench-cli run --set speedups.precision=" + prec + ")";
    p.add(speedup::kPrecision, std::string("precision ") + choice::kFp32 + " → " + prec, skip,
          [](Config& c, const Planner& pl) { c.speedups.precision = pl.precision(); });
  }
  // early stopping
  {
    const int epochs = user.train.epochs;
    std::string caveat = earlyStoppingCaveat(epochs, kLadderPatience);
    p.add(speedup::kEarlyStopping, "early stopping (patience " + std::to_string(kLadderPatience) + ")",
          c.available(speedup::kEarlyStopping) ? "" : c.note(speedup::kEarlyStopping, "early stopping is not available"),
          [](Config& c, const Planner&) { c.speedups.early_stopping.patience = kLadderPatience; }, caveat);
  }
  // sharding: needs more than one device in the cumulative config
  {
    std::string skip;
    if (p.cum.speedups.devices <= 1) skip = "needs devices > 1 (the devices step did not run)";
    else if (!c.available(speedup::kSharding)) skip = c.note(speedup::kSharding, "sharding is not available");
    p.add(speedup::kSharding, "sharding zero1", skip, [](Config& c, const Planner& pl) {
      c.speedups.sharding = "zero1";
      if (c.speedups.devices <= 1) c.speedups.devices = pl.devices();  // alone: bring the devices it needs
    });
    if (!p.alone.empty() && p.alone.back().key == speedup::kSharding)
      p.alone.back().added = "sharding zero1 with devices " + std::to_string(p.devices()) + " (alone)";
  }
  // inference-mode evaluation
  {
    p.add(speedup::kInferenceEval, "inference-mode eval",
          c.available(speedup::kInferenceEval) ? "" : c.note(speedup::kInferenceEval, "inference-mode evaluation is not available"),
          [](Config& c, const Planner&) { c.speedups.inference_eval = true; });
  }
  addLevers(p);
  std::vector<LadderStep> out = std::move(p.steps);
  out.insert(out.end(), p.alone.begin(), p.alone.end());
  return out;
}

}  // namespace wb::ladder
