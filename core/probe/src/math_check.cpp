#include "wb/probe/math_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wb/common/clock.h"
#include "wb/data/dataset.h"
#include "wb/common/speedups.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/train/machine_capabilities.h"
#include "wb/train/trainer.h"

namespace wb::probe {
using nlohmann::json;

namespace {

// What one side's first steps gave: each step's loss, the validation loss after the last, and the
// start event's speedups (active or not on this machine).
struct Trace {
  std::vector<std::pair<int64_t, double>> losses;
  std::optional<double> val_loss;
  json speedups = json::object();
  std::string device;
  int64_t train_samples = 0;
};

std::string pct(double fraction) {
  char buf[32];
  const double p = fraction * 100;
  std::snprintf(buf, sizeof buf, p >= 1 ? "%.1f %%" : "%.2g %%", p);
  return buf;
}

// The config a side trains in the check: its first `steps` steps (an epoch cap that lets them
// happen), a step event per step, a small validation split, the intra-op threads fixed (the same
// for both sides, so a thread change is not read as a change of math), no checkpoints.
Config checkConfig(Config c, int steps, int threads) {
  c.train.max_steps = steps;
  c.train.epochs = std::max(c.train.epochs, steps);
  c.train.log_every = 1;
  if (c.data.limit_val <= 0 || c.data.limit_val > 1000) c.data.limit_val = 1000;
  if (c.train.threads <= 0) c.train.threads = threads;
  return c;
}

Result<Trace> trainSteps(const Config& c, const MathCheckOptions& o) {
  Trace t;
  proto::EventSink sink;
  sink.setObserver([&t](const json& e) {
    const std::string type = e.value("type", "");
    if (type == "step" && e.contains("loss") && e["loss"].is_number())
      t.losses.emplace_back(e.value("step", int64_t{0}), e["loss"].get<double>());
    else if (type == "eval" && e.contains("val_loss") && e["val_loss"].is_number())
      t.val_loss = e["val_loss"].get<double>();
    else if (type == "start") {
      t.speedups = e.value("speedups", json::object());
      t.device = e.value("device", "");
      t.train_samples = e.value("dataset", json::object()).value("train", int64_t{0});
    }
  });
  train::TrainerOptions to;
  to.config = c;
  to.stop_flag = o.stop;
  to.compute_only_steps = 0;
  train::Trainer trainer(to, sink);
  auto out = trainer.run();
  if (!out.ok()) return out.error();
  if (out->status == proto::kStatusCancelled) return makeError(Errc::Cancelled, "the math check was cancelled");
  return t;
}

double deviation(double base, double other) {
  if (!std::isfinite(base) || !std::isfinite(other)) return std::isfinite(base) == std::isfinite(other) ? 0 : INFINITY;
  return std::abs(other - base) / std::max(std::abs(base), 1e-3);
}

// The rows: each step both sides reached, then the validation loss after the last (step 0); each
// with its deviation and tolerance (the rule's, or the baseline's own rerun's times the factor).
void compare(const Trace& base, const Trace& variant, const Trace* repeat, const MathCheckOptions& o,
             MathCheckResult& r) {
  double repeatSoFar = 0;
  const size_t n = std::min(base.losses.size(), variant.losses.size());
  for (size_t i = 0; i < n; ++i) {
    MathStep s;
    s.step = base.losses[i].first;
    s.baseline = base.losses[i].second;
    s.variant = variant.losses[i].second;
    if (repeat && i < repeat->losses.size()) {
      s.repeat = repeat->losses[i].second;
      repeatSoFar = std::max(repeatSoFar, deviation(s.baseline, *s.repeat));
    }
    s.deviation = deviation(s.baseline, s.variant);
    s.tolerance = std::max(o.tolerance_per_step * double(s.step), kMathRepeatFactor * repeatSoFar);
    r.rows.push_back(s);
  }
  if (base.val_loss && variant.val_loss) {
    MathStep e;
    e.baseline = *base.val_loss;
    e.variant = *variant.val_loss;
    if (repeat && repeat->val_loss) e.repeat = *repeat->val_loss;
    const double repeatDev = e.repeat ? deviation(e.baseline, *e.repeat) : 0;
    e.deviation = deviation(e.baseline, e.variant);
    e.tolerance = std::max(o.tolerance_per_step * double(n), kMathRepeatFactor * std::max(repeatSoFar, repeatDev));
    r.rows.push_back(e);
  }
}

void summarise(MathCheckResult& r) {
  for (const MathStep& s : r.rows) {
    if (s.repeat) r.max_repeat_deviation = std::max(r.max_repeat_deviation, deviation(s.baseline, *s.repeat));
    if (s.deviation > r.max_deviation || (r.max_at_step == 0 && s.step > 0 && s.deviation >= r.max_deviation))
      r.max_deviation = s.deviation, r.max_at_step = s.step;
    if (r.diverged_at_step == 0 && s.step > 0 && !(s.deviation <= s.tolerance)) r.diverged_at_step = s.step;
  }
}

const MathStep* evalRow(const MathCheckResult& r) {
  return !r.rows.empty() && r.rows.back().step == 0 ? &r.rows.back() : nullptr;
}

// Every field the variant changes (but the run's name and seed, which the reference runs draw),
// with the speedup that owns it (nullptr: a field no speedup owns: the batch, the optimiser's numbers...).
struct Change {
  std::string path;
  const Speedup* speedup = nullptr;
};

// Fields no speedup owns that leave the training's steps as they were.
bool keepsTheSteps(const std::string& path) {
  static const std::vector<std::string> fields{"train.eval_batch_size", "train.log_every", "train.threads"};
  return std::find(fields.begin(), fields.end(), path) != fields.end();
}

std::vector<Change> changesOf(const Config& a, const Config& b) {
  std::vector<Change> out;
  for (const auto& c : compare::configDiff(proto::configToJson(a), proto::configToJson(b))) {
    const auto& ignored = compare::kRepeatIgnoredFields;
    if (std::find(ignored.begin(), ignored.end(), c.path) != ignored.end()) continue;
    out.push_back({c.path, speedupOfField(c.path)});
  }
  return out;
}

// What every change does to the math, by its descriptor (a field no speedup owns changes it unless
// it leaves the steps alone), `inactive` speedups keeping it here: the fields of those that change
// it; empty when every change keeps it.
std::vector<std::string> mathChangingByDescriptor(const std::vector<Change>& changes, const std::vector<std::string>& inactive = {}) {
  std::vector<std::string> out;
  for (const Change& c : changes) {
    if (c.speedup && std::find(inactive.begin(), inactive.end(), c.speedup->key) != inactive.end()) continue;
    if ((c.speedup && c.speedup->math.math == Math::Changes) || (!c.speedup && !keepsTheSteps(c.path))) out.push_back(c.path);
  }
  return out;
}

// "a", "a and b", "a, b and c".
std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return s;
}

// The verdict from the rows and what every changed speedup's descriptor says (`s`: the first).
void judge(const Speedup* s, const std::vector<Change>& changes, const std::vector<std::string>& inactive, MathCheckResult& r) {
  const MathStep* ev = evalRow(r);
  const bool evalDiffers = ev && !(ev->deviation <= ev->tolerance);
  const std::string why = s ? std::string(" (") + s->math.why + ")" : "";
  if (r.diverged_at_step > 0 || evalDiffers) {
    const auto first = std::find_if(r.rows.begin(), r.rows.end(), [&](const MathStep& m) { return m.step == r.diverged_at_step; });
    const MathStep& at = r.diverged_at_step > 0 ? *first : *ev;
    r.keeps_math = false;
    r.verdict = (r.diverged_at_step > 0 ? "losses differ by " + pct(at.deviation) + " at step " + std::to_string(at.step)
                                        : "the validation losses after step " + std::to_string(r.steps) + " differ by " + pct(at.deviation)) +
                " (tolerance " + pct(at.tolerance) + "): treated as changing the math" +
                (s && s->math.math == Math::Keeps && changes.size() == 1 ? ", though its descriptor says it keeps it" + why : why);
    return;
  }
  const std::string agree = "the first " + std::to_string(r.rows.size() - (ev ? 1 : 0)) + " steps' losses" +
                            (ev ? " and the validation loss" : "") + " agree within " + pct(r.max_deviation) +
                            " (tolerance " + r.tolerance_rule + ")";
  // Only the first speedup's descriptor used to be read: a change that also carries one whose
  // descriptor says it changes the math (or where the run ends) changes it, whatever the steps show.
  const std::vector<std::string> changing = mathChangingByDescriptor(changes, inactive);
  const bool onlyTheFirst = changes.size() == 1;
  if (!changing.empty() && s && s->math.math == Math::Changes && onlyTheFirst) {
    r.keeps_math = false;
    r.verdict = agree + ", but its descriptor says it changes the math" + why + ": treated as changing it";
  } else if (!changing.empty()) {
    r.keeps_math = false;
    r.verdict = agree + ", but by their descriptors " + joined(changing) + (changing.size() == 1 ? " changes" : " change") +
                " the math: treated as changing it";
  } else if (r.inactive) {
    r.keeps_math = true;
    r.verdict = "keeps the math here: " + std::string(s->key) + " is inactive on this machine; " + agree;
  } else {
    r.keeps_math = true;
    r.verdict = "keeps the math: " + agree;
  }
}

// The varied speedup (the first whose field the variant changes), or nullptr (fields no speedup owns).
const Speedup* variedSpeedup(const std::vector<Change>& changes) {
  for (const Change& c : changes)
    if (c.speedup) return c.speedup;
  return nullptr;
}

// The first change one process cannot show (more ranks, or where the run ends), or nullptr.
const Speedup* uncheckable(const std::vector<Change>& changes) {
  for (const Change& c : changes)
    if (c.speedup && c.speedup->math.check != MathCheck::Steps) return c.speedup;
  return nullptr;
}

// What one process cannot check: more ranks, or where the run ends. nullopt: the steps can show it.
std::optional<std::string> notCheckableHere(const Speedup* s, const Config& a, const Config& b) {
  if (s && s->math.check == MathCheck::Ranks)
    return std::string(s->key) + " needs more than one process, so one process cannot compare its steps: short " +
           "whole-process trials check it; its descriptor says it " + mathWords(s->math.math) + " (" + s->math.why + ")";
  if (s && s->math.check == MathCheck::Stopping)
    return std::string(s->key) + " leaves every step as it was and moves where the run ends, which the first steps " +
           "cannot show (" + s->math.why + "), so it changes the math";
  if (a.speedups.devices > 1 || b.speedups.devices > 1)
    return "the experiment runs on " + std::to_string(std::max(a.speedups.devices, b.speedups.devices)) +
           " devices: one process cannot train it; set speedups.devices=1 to check the rest here";
  return std::nullopt;
}

// Unchecked, the change keeps the math only when every part of it does, by its descriptor: two
// devices and a larger batch change it whatever loader workers ride with them.
void judgeUnchecked(const std::string& why, const std::vector<Change>& changes, MathCheckResult& r) {
  const std::vector<std::string> changing = mathChangingByDescriptor(changes);
  r.keeps_math = changing.empty();
  r.verdict = "not checked in one process: " + why;
  if (changes.size() > 1)
    r.verdict += r.keeps_math ? "; every one of its " + std::to_string(changes.size()) + " changes keeps the math by its descriptor"
                              : "; of its " + std::to_string(changes.size()) + " changes, " + joined(changing) +
                                    (changing.size() == 1 ? " changes" : " change") + " the math: the whole is treated as changing it";
}


// The record's heading fields, both for a change checked here and one that cannot be.
MathCheckResult headingOf(const MathCheckOptions& o, const Speedup* s) {
  MathCheckResult r;
  r.changed = compare::describeDiff(compare::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant)));
  r.speedup = s ? s->key : "";
  r.steps = std::max(1, o.steps);
  r.tolerance_per_step = o.tolerance_per_step;
  r.dataset_id = data::datasetFingerprint(o.baseline.data.dataset);
  r.tolerance_rule = pct(o.tolerance_per_step) + " x step (" + pct(o.tolerance_per_step * r.steps) + " at step " +
                     std::to_string(r.steps) + "), or " + wb::fmtFixed(kMathRepeatFactor, 0) +
                     "x the baseline's own rerun where that is larger";
  return r;
}

Status validArms(const MathCheckOptions& o) {
  for (const Config* c : {&o.baseline, &o.variant})
    if (auto errs = validate(*c); !errs.empty()) return makeError(Errc::InvalidConfig, formatFieldErrors(errs));
  return {};
}

}  // namespace

Result<std::optional<MathCheckResult>> mathNotCheckable(const MathCheckOptions& o) {
  if (auto st = validArms(o); !st.ok()) return st.error();
  const std::vector<Change> changes = changesOf(o.baseline, o.variant);
  const auto why = notCheckableHere(uncheckable(changes), o.baseline, o.variant);
  if (!why) return std::optional<MathCheckResult>();
  MathCheckResult r = headingOf(o, variedSpeedup(changes));
  judgeUnchecked(*why, changes, r);  // the descriptors' word, said to be unchecked
  if (auto splits = data::openSplits(o.baseline.data, o.baseline.seed); splits.ok()) r.train_samples = splits->train->size();
  return std::optional<MathCheckResult>(std::move(r));
}

Result<MathCheckResult> checkMath(const MathCheckOptions& o) {
  auto unchecked = mathNotCheckable(o);
  if (!unchecked.ok()) return unchecked.error();
  if (*unchecked) return std::move(**unchecked);
  Stopwatch total;
  const std::vector<Change> changes = changesOf(o.baseline, o.variant);
  const Speedup* s = variedSpeedup(changes);
  MathCheckResult r = headingOf(o, s);
  const int threads = train::defaultThreads(o.baseline, 1);
  const auto side = [&](const Config& c, const char* name) -> Result<Trace> {
    if (o.progress) o.progress(std::string(name) + ": the first " + std::to_string(r.steps) + " steps…");
    return trainSteps(checkConfig(c, r.steps, threads), o);
  };
  auto base = side(o.baseline, "baseline");
  if (!base.ok()) return base.error();
  auto variant = side(o.variant, "variant");
  if (!variant.ok()) return variant.error();
  std::optional<Trace> repeat;
  if (o.repeat_baseline) {
    auto again = side(o.baseline, "baseline again (its own noise)");
    if (!again.ok()) return again.error();
    repeat = std::move(again.value());
  }
  r.device = variant->device;
  r.train_samples = base->train_samples;
  std::vector<std::string> inactive;  // asked for but inactive on this machine: they keep the math here
  for (const Change& c : changes)
    if (c.speedup && variant->speedups.contains(c.speedup->key)) {
      const json& st = variant->speedups[c.speedup->key];
      if (st.value("requested", false) && !st.value("active", false)) inactive.push_back(c.speedup->key);
    }
  r.inactive = s && std::find(inactive.begin(), inactive.end(), s->key) != inactive.end();
  compare(*base, *variant, repeat ? &*repeat : nullptr, o, r);
  r.checked = true;
  summarise(r);
  judge(s, changes, inactive, r);
  r.total_s = total.seconds();
  return r;
}

render::Table mathCheckTable(const MathCheckResult& r) {
  render::Table t;
  t.title = "Does it keep the math? " + r.changed;
  t.columns = {{"step", "Step", ""},           {"baseline", "Baseline loss", ""}, {"variant", "Variant loss", ""},
               {"repeat", "Baseline again", ""}, {"deviation", "Deviation", "%"},   {"tolerance", "Tolerance", "%"},
               {"within", "", ""}};
  const auto loss = [](double v) { return render::Cell::num(wb::fmtFixed(v, 6), v); };
  for (const MathStep& s : r.rows)
    t.rows.push_back({render::Cell::str(s.step == 0 ? "eval (val loss)" : std::to_string(s.step)), loss(s.baseline),
                      loss(s.variant), s.repeat ? loss(*s.repeat) : render::Cell::str("–"),
                      render::Cell::num(pct(s.deviation), s.deviation * 100),
                      render::Cell::num(pct(s.tolerance), s.tolerance * 100),
                      render::Cell::str(s.deviation <= s.tolerance ? "same" : "differs")});
  t.notes.push_back("Verdict: " + r.verdict + ".");
  if (r.checked)
    t.notes.push_back("Deviation: |variant − baseline| ÷ |baseline| per step, from one seed, in one process on " + r.device +
                      "; tolerance " + r.tolerance_rule + ".");
  return t;
}

}  // namespace wb::probe
