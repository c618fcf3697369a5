#include "wb/compare/compare.h"

#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "wb/compare/mfu.h"

namespace wb::compare {
using nlohmann::json;
using records::AccuracySpread;
using records::CpuUse;
using records::EpochSample;
using records::EvalSample;
using records::HostNoise;
using records::RunRecord;
using records::StepCpu;
using records::StepSample;
using records::StepTimes;
using records::cpuUse;
using records::loadAccuracySpread;
using records::runLabel;

namespace {

std::optional<double> throughputAfterWarmup(const std::vector<StepSample>& steps) {
  double samples = 0, seconds = 0;
  for (size_t i = 1; i < steps.size(); ++i) {
    const auto& a = steps[i - 1];
    const auto& b = steps[i];
    // Across an epoch boundary the interval holds an evaluation: leave it out.
    if (a.epoch != b.epoch || b.samples <= a.samples || b.t <= a.t) continue;
    samples += static_cast<double>(b.samples - a.samples);
    seconds += b.t - a.t;
  }
  if (seconds > 0) return samples / seconds;
  if (steps.size() >= 2) {
    std::vector<double> rates;
    for (size_t i = 1; i < steps.size(); ++i)
      if (steps[i].samples_per_s > 0) rates.push_back(steps[i].samples_per_s);
    if (!rates.empty()) return stats::median(rates);
  }
  return std::nullopt;
}

std::optional<double> epochThroughput(const std::vector<EpochSample>& epochs) {
  std::vector<double> rates;
  for (const auto& e : epochs) {
    const double r = e.train_samples_per_s > 0 ? e.train_samples_per_s : e.samples_per_s;
    if (r > 0) rates.push_back(r);
  }
  if (rates.empty()) return std::nullopt;
  return stats::median(rates);
}

// Training throughput and where it came from (the header's definition, in its order).
void trainThroughput(const RunRecord& run, RunMetrics& m) {
  using S = ThroughputSource;
  auto take = [&](std::optional<double> v, S source) {
    if (m.train_samples_per_s || !v || !(*v > 0)) return;
    m.train_samples_per_s = v;
    m.throughput_source = source;
  };
  if (run.finished) take(proto::finite(run.summary.train_samples_per_s), S::Summary);
  take(throughputAfterWarmup(run.steps), S::StepEvents);
  take(epochThroughput(run.epochs), S::EpochEvents);
  if (!run.steps.empty()) take(run.steps.front().samples_per_s, S::StepEventsWithWarmup);
}

// "another process used 0.9 of 2 cores (busiest: stress-ng (pid 812) 0.8 cores)" (the writer's
// note when the numbers are missing).
std::string otherLoadText(const Contention& c, const std::string& writerNote) {
  if (!c.other_load_cores) return writerNote.empty() ? "another load shared the CPU" : writerNote;
  std::string text = "another process used " + fmtFixed(*c.other_load_cores, 1);
  text += c.cores > 0 ? " of " + std::to_string(c.cores) + " cores" : " cores";
  const std::string who = describeLoads(c.busiest_others);
  return who.empty() ? text : text + " (busiest: " + who + ")";
}

// "it shared the cores with its experiment's other runs (1.0 of 2 cores beside it)".
std::string sharedText(const Contention& c) {
  std::string text = "it shared the cores with its experiment's other runs";
  if (!c.shared_cores) return text;
  return text + " (" + fmtFixed(*c.shared_cores, 1) + (c.cores > 0 ? " of " + std::to_string(c.cores) : "") +
         " cores beside it)";
}

// The cores that slowed it, whoever took them.
double slowingCores(const Contention& c) { return c.other_load_cores.value_or(0) + c.shared_cores.value_or(0); }

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, const json*>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out.emplace_back(prefix, &j);
}

// A config value for people: strings without quotes.
std::string show(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

}  // namespace

std::optional<double> speedupOf(std::optional<double> baseline_time, std::optional<double> run_time) {
  if (!baseline_time || !run_time || *run_time <= 0 || *baseline_time <= 0) return std::nullopt;
  return *baseline_time / *run_time;
}

std::optional<double> timeToAccuracy(const std::vector<EvalSample>& evals, double target) {
  // Accuracies are written rounded to float precision: forgive a few ulps so that the run whose
  // best defines the target always reaches it.
  constexpr double kEps = 1e-9;
  for (size_t i = 0; i < evals.size(); ++i) {
    if (!(evals[i].val_acc >= target - kEps)) continue;
    if (i == 0) return evals[0].t;
    const auto& a = evals[i - 1];
    const auto& b = evals[i];
    const double rise = b.val_acc - a.val_acc;
    if (rise <= 0) return b.t;
    const double f = std::clamp((target - a.val_acc) / rise, 0.0, 1.0);
    return a.t + f * (b.t - a.t);
  }
  return std::nullopt;
}

std::optional<StepTimes> meanStepTimes(const std::vector<StepSample>& steps) {
  StepTimes sum;
  int n = 0;
  const size_t first = steps.size() > 1 ? 1 : 0;  // the first interval holds the warm-up
  for (size_t i = first; i < steps.size(); ++i) {
    if (!steps[i].ms) continue;
    const auto& m = *steps[i].ms;
    sum.data += m.data, sum.h2d += m.h2d, sum.fwd += m.fwd, sum.bwd += m.bwd, sum.opt += m.opt, sum.comm += m.comm;
    sum.other += m.other;
    ++n;
  }
  if (n == 0) return std::nullopt;
  sum.data /= n, sum.h2d /= n, sum.fwd /= n, sum.bwd /= n, sum.opt /= n, sum.comm /= n, sum.other /= n;
  return sum;
}

LrScaling runLrScaling(const RunRecord& run) {
  OptimConfig optim;
  if (const json& lr = run.configAt("optim.lr"); lr.is_number()) optim.lr = lr.get<double>();
  if (const json& mode = run.configAt("optim.lr_scaling"); mode.is_string()) optim.lr_scaling = mode.get<std::string>();
  if (const json& w = run.configAt("optim.lr_scaling_warmup"); w.is_number()) optim.lr_scaling_warmup = w.get<double>();
  if (const json& b = run.configAt("optim.lr_base_batch"); b.is_number_integer()) optim.lr_base_batch = b.get<int>();
  const json& batch = run.configAt("train.batch_size");
  return lrScaling(optim, run.world_size, run.start.total_steps, batch.is_number_integer() ? batch.get<int>() : 0);
}

RunMetrics computeMetrics(const RunRecord& run, std::optional<double> target) {
  RunMetrics m;
  m.status = run.status;
  m.lr = runLrScaling(run);
  const proto::RunSummary& s = run.summary;

  m.epochs = static_cast<int>(run.epochs.size());
  if (s.epochs && m.epochs == 0) m.epochs = *s.epochs;
  m.steps = run.steps.empty() ? 0 : run.steps.back().step;
  if (s.steps) m.steps = *s.steps;

  // Rank 0's clock, the same axis as the time to target (setup + training + evaluation).
  if (run.last_t > 0) {
    m.wall_s = run.last_t;
    m.wall_partial = !run.finished;
  } else {
    m.wall_s = proto::finite(s.wall_s);
  }

  if (!run.epochs.empty()) {
    double sum = 0;
    for (const auto& e : run.epochs) sum += e.seconds;
    m.time_per_epoch_s = sum / static_cast<double>(run.epochs.size());
  } else if (m.wall_s && m.epochs > 0) {
    m.time_per_epoch_s = *m.wall_s / m.epochs;
  }

  trainThroughput(run, m);
  m.run_wall_s = proto::runWallSeconds(s);
  m.time_to_first_step_s = proto::finite(s.time_to_first_step_s);
  m.eval_s = proto::finite(s.eval_s);
  if (!m.eval_s && !run.evals.empty()) {
    double ms = 0;
    for (const auto& e : run.evals) ms += e.eval_ms;
    if (ms > 0) m.eval_s = ms / 1000.0;
  }
  m.contention = contentionOf(run);
  m.flops = runFlops(run);

  for (const auto& e : run.evals) {
    if (!m.best_val_acc || e.val_acc > *m.best_val_acc) m.best_val_acc = e.val_acc;
    m.final_val_acc = e.val_acc;
  }
  if (!m.best_val_acc) m.best_val_acc = proto::finite(s.best_val_acc);
  if (!m.final_val_acc) m.final_val_acc = proto::finite(s.final_val_acc);
  if (target) m.time_to_target_s = timeToAccuracy(run.evals, *target);

  if (run.onCuda() && !run.device_peak.empty()) {
    int64_t peak = 0;
    for (const auto& [rank, bytes] : run.device_peak) peak = std::max(peak, bytes);
    m.peak_mem_bytes = static_cast<double>(peak);
    m.peak_mem_kind = "device";
  } else if (!run.rss_peak.empty()) {
    int64_t sum = 0;
    for (const auto& [rank, bytes] : run.rss_peak) sum += bytes;
    m.peak_mem_bytes = static_cast<double>(sum);
    m.peak_mem_kind = "host";
  } else if (s.peak_mem) {
    m.peak_mem_bytes = static_cast<double>(*s.peak_mem);
    m.peak_mem_kind = run.onCuda() ? "device" : "host";
  }

  for (const auto& st : run.steps) {
    if (st.amp_skipped) m.skipped_steps = *st.amp_skipped;
    if (st.amp_scale) m.amp_scale = *st.amp_scale;
  }
  m.step_ms = meanStepTimes(run.steps);
  if (!run.evals.empty()) {
    double sum = 0;
    int n = 0;
    for (const auto& e : run.evals)
      if (e.eval_ms > 0) sum += e.eval_ms, ++n;
    if (n > 0) m.eval_ms = sum / n;
  }
  return m;
}

void StepLoad::add(const StepCpu& cpu) {
  sum += std::max(0.0, cpu.machine_busy_cores - cpu.process_cores);
  ++count;
  if (cpu.cores > 0) cores = cpu.cores;
}

std::optional<CpuUse> StepLoad::use() const {
  if (count == 0) return std::nullopt;
  CpuUse u;
  u.cores = cores;
  u.other_load_cores = sum / count;
  u.contended = isContended(*u.other_load_cores);
  return u;
}

Contention contentionOf(const CpuUse& cpu) {
  Contention c;
  c.cores = cpu.cores;
  c.other_load_cores = cpu.other_load_cores;
  c.used_cores = cpu.used_cores;
  c.asked_cores = cpu.asked_cores;
  c.shared_cores = cpu.shared_cores;
  c.shared = cpu.shared;
  c.contended = cpu.contended || cpu.shared;
  c.busiest_others = cpu.busiest_others;
  if (cpu.contended) c.note = otherLoadText(c, cpu.note);
  if (cpu.shared) c.note += (c.note.empty() ? "" : "; ") + sharedText(c);
  return c;
}

Contention contentionOf(const RunRecord& run) {
  const std::optional<CpuUse> cpu = cpuUse(run.summary);
  Contention c;
  if (cpu) {
    c = contentionOf(*cpu);
  } else if (!run.finished && run.world_size == 1) {  // with more ranks, the others' load is the run's own
    StepLoad load;
    for (const auto& st : run.steps)
      if (st.cpu) load.add(*st.cpu);
    if (auto use = load.use()) c = contentionOf(*use);
  }
  if (c.cores <= 0) c.cores = run.cores();
  return c;
}

namespace {
bool sameFootprint(const RunRecord& a, const Contention& ca, const RunRecord& b, const Contention& cb) {
  if (!ca.asked_cores || !cb.asked_cores || std::abs(*ca.asked_cores - *cb.asked_cores) > 0.5) return false;
  for (const Speedup& s : speedupTable())
    if (s.uses_cores && a.configAt(s.config_path) != b.configAt(s.config_path)) return false;
  return true;
}
}  // namespace

bool slowedAlike(const RunRecord& a, const Contention& ca, const RunRecord& b, const Contention& cb) {
  if (!ca.contended && !cb.contended) return true;
  if (!ca.other_load_cores || !cb.other_load_cores) return false;
  return std::abs(slowingCores(ca) - slowingCores(cb)) < kContendedOtherCores && sameFootprint(a, ca, b, cb);
}

bool hostChangedOverRuns(const RunRecord& a, const RunRecord& b, double checkBand) {
  std::vector<double> kernelMs;
  for (const RunRecord* r : {&a, &b})
    if (const auto speed = hostSpeedOf(*r)) kernelMs.push_back(speed->before_ms), kernelMs.push_back(speed->after_ms);
  return stats::hostChangedOverPair(kernelMs, checkBand);
}

std::string contentionNote(const RunMetrics& run, const RunMetrics& baseline) {
  std::string out = run.contention.note;
  if (!baseline.contention.contended) return out;
  if (!out.empty()) out += "; ";
  return out + "the baseline: " + baseline.contention.note;
}

std::vector<ConfigChange> configDiff(const json& base, const json& run) {
  std::vector<std::pair<std::string, const json*>> a, b;
  flatten(base, "", a);
  flatten(run, "", b);
  std::vector<ConfigChange> out;
  for (const auto& [path, value] : b) {
    auto it = std::find_if(a.begin(), a.end(), [&](const auto& p) { return p.first == path; });
    if (it == a.end()) out.push_back({path, "(absent)", show(*value)});
    else if (*it->second != *value) out.push_back({path, show(*it->second), show(*value)});
  }
  for (const auto& [path, value] : a) {
    bool inRun = std::any_of(b.begin(), b.end(), [&](const auto& p) { return p.first == path; });
    if (!inRun) out.push_back({path, show(*value), "(absent)"});
  }
  return out;
}

namespace {

// A value as people read it: a switch is on or off.
std::string shownValue(const std::string& v) { return v == "true" ? "on" : v == "false" ? "off" : v; }

}  // namespace

std::string describeDiff(const std::vector<ConfigChange>& diff) {
  std::string out;
  for (const auto& c : diff) {
    if (c.path == "name") continue;  // what the run is called, not how it differs
    if (!out.empty()) out += "; ";
    // The field by its label (the option schema's), its key only where the schema has none.
    const FieldSpec* spec = findFieldSpec(c.path);
    const std::string field = spec && spec->label && *spec->label ? spec->label : c.path;
    out += field + " " + shownValue(c.before) + " → " + shownValue(c.after);
  }
  return out.empty() ? "same config" : out;
}

bool sameConfiguration(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) return a == b;
  json x = a, y = b;
  for (const auto& field : kRepeatIgnoredFields) x.erase(field), y.erase(field);
  return x == y;
}

std::string dataDifference(const json& base, const json& run) {
  std::string out;
  for (const auto& field : kDataFields) {
    std::string path = "/" + field;
    std::replace(path.begin(), path.end(), '.', '/');
    const json::json_pointer ptr(path);
    const json a = base.contains(ptr) ? base.at(ptr) : json(), b = run.contains(ptr) ? run.at(ptr) : json();
    if (a == b) continue;
    if (!out.empty()) out += "; ";
    out += field + " differs (" + (a.is_null() ? "(absent)" : show(a)) + " vs " + (b.is_null() ? "(absent)" : show(b)) + ")";
  }
  return out;
}

std::string unfinishedNote(const std::string& status) {
  if (status == "ok" || status == "early-stopped") return "";
  if (status == "running") return "still running: no speedup until it ends";
  return status + ": a run that did not finish gives no speedup";
}

double HostSpeed::change() const {
  if (!(before_ms > 0) || !(after_ms > 0)) return 0;
  return std::max(before_ms, after_ms) / std::min(before_ms, after_ms) - 1;
}

std::optional<HostSpeed> hostSpeedOf(const RunRecord& run) {
  if (!run.summary.host_speed) return std::nullopt;
  HostSpeed h;
  h.before_ms = run.summary.host_speed->before_ms;
  h.after_ms = run.summary.host_speed->after_ms;
  if (!(h.before_ms > 0) || !(h.after_ms > 0)) return std::nullopt;
  return h;
}

std::string hostSpeedNote(const std::optional<HostSpeed>& speed, const HostNoise& noise) {
  const double band = noise.hostKernelBand();
  if (!speed || !(speed->change() > band)) return "";
  return "the host's speed changed during the run (kernel " + fmtFixed(speed->before_ms, 2) + " → " +
         fmtFixed(speed->after_ms, 2) + " ms, " + fmtFixed(speed->change() * 100, 0) + " % > the check's own ±" +
         fmtFixed(band * 100, 0) + " % " + (noise.hostKernelMeasured() ? "measured noise)" : "assumed noise)");
}

std::string FairTarget::describe() const {
  const std::string acc_text = fmtAccuracy(acc);
  if (user_set) return acc_text + " (set by the user)";
  if (!(spread_pp > 0)) return acc_text + " (the baseline's best)";
  return acc_text + " (the baseline's best " + fmtAccuracy(reference_best) + " less " + fmtFixed(spread_pp, 2) +
         " points: " + spread_source + ")";
}

FairTarget fairTarget(std::optional<double> user, double referenceBest, int64_t valImages,
                      const std::optional<AccuracySpread>& measured) {
  FairTarget t;
  t.reference_best = referenceBest;
  if (user) {
    t.acc = *user, t.user_set = true;
    return t;
  }
  if (measured && measured->runs >= 2) {
    t.spread_pp = measured->sd_pp;
    t.spread_source = "seed-to-seed sd of " + std::to_string(measured->runs) + " runs";
  } else if (valImages > 0 && referenceBest > 0 && referenceBest < 1) {
    t.spread_pp = 100.0 * std::sqrt(referenceBest * (1 - referenceBest) / double(valImages));
    t.spread_source = "1 SE of " + std::to_string(valImages) + " validation images";
  }
  t.acc = std::max(0.0, referenceBest - t.spread_pp / 100.0);
  return t;
}

std::optional<FairTarget> fairTargetOf(std::optional<double> user, const std::vector<const RunRecord*>& references) {
  std::optional<double> lowest;
  int64_t images = 0;
  const RunRecord* first = nullptr;
  for (const RunRecord* r : references) {
    if (!unfinishedNote(r->status).empty() && r->status != "running") continue;
    const auto best = computeMetrics(*r, std::nullopt).best_val_acc;
    if (!best) continue;
    lowest = lowest ? std::min(*lowest, *best) : *best;
    if (!r->evals.empty()) images = std::max(images, r->evals.back().eval_samples);
    if (!first) first = r;
  }
  if (!lowest && !user) return std::nullopt;
  return fairTarget(user, lowest.value_or(0.0), images, first ? loadAccuracySpread(first->config) : std::nullopt);
}

std::string ComparisonRow::noSpeedupReason() const {
  if (is_baseline) return "";
  if (!not_comparable.empty()) return "not comparable: " + not_comparable;
  if (!unfinished.empty()) return unfinished;
  if (!contended.empty()) return "contended: " + contended;
  if (!host_changed.empty()) return host_changed;
  if (repeat_of_baseline) return "repeat of the baseline";
  return "";
}

std::string ComparisonRow::withheldWord() const {
  if (is_baseline) return "";
  if (!not_comparable.empty()) return "not comparable";
  if (!unfinished.empty()) return unfinished.rfind("the baseline", 0) == 0 ? "baseline unfinished" : m.status;
  if (!contended.empty()) return render::kContendedText;
  if (!host_changed.empty()) return "host speed changed";
  if (repeat_of_baseline) return "repeat of baseline";
  return "";
}

bool Comparison::anyRepeats() const {
  return std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& r) { return r.group_runs > 1; });
}

namespace {

// Repeat groups in row order: group 0 is the baseline's configuration.
void assignGroups(Comparison& cmp, const std::vector<const RunRecord*>& records) {
  std::vector<const json*> groupConfigs;
  for (size_t i = 0; i < records.size(); ++i) {
    const json& config = records[i]->config;
    auto it = std::find_if(groupConfigs.begin(), groupConfigs.end(),
                           [&](const json* g) { return sameConfiguration(*g, config); });
    cmp.rows[i].group = static_cast<int>(it - groupConfigs.begin());
    if (it == groupConfigs.end()) groupConfigs.push_back(&config);
  }
  cmp.groups = static_cast<int>(groupConfigs.size());
  for (auto& row : cmp.rows) {
    row.group_runs = static_cast<int>(std::count_if(cmp.rows.begin(), cmp.rows.end(),
                                                    [&](const ComparisonRow& r) { return r.group == row.group; }));
    row.repeat_of_baseline = !row.is_baseline && row.group == 0;
  }
}

// A row whose own run may count among its group's repeats: the others count where they were slowed
// alike with the baseline (the baseline's own load is then every counted run's).
bool cleanRun(const ComparisonRow& row) {
  return row.not_comparable.empty() && unfinishedNote(row.m.status).empty() && (row.is_baseline || row.contended.empty()) &&
         row.host_changed.empty();
}

struct GroupValues {
  std::vector<double> target, rate;
};

GroupValues groupValues(const Comparison& cmp, int group, const std::vector<bool>& clean) {
  GroupValues v;
  for (size_t i = 0; i < cmp.rows.size(); ++i) {
    const ComparisonRow& row = cmp.rows[i];
    if (row.group != group || !clean[i]) continue;
    if (row.m.time_to_target_s) v.target.push_back(*row.m.time_to_target_s);
    if (row.m.train_samples_per_s) v.rate.push_back(*row.m.train_samples_per_s);
  }
  return v;
}

// One comparison of existing runs: one look, the host's measured band as the floor.
stats::VerdictRule ruleFor(const Comparison& cmp, const std::string& metric) {
  stats::VerdictRule r;
  r.min_effect = cmp.min_effect;
  r.floor_band = cmp.noise.floorFor(metric);
  return r;
}

// Each group's estimates against the baseline's group.
void estimateGroups(Comparison& cmp) {
  std::vector<bool> clean;
  for (const auto& row : cmp.rows) clean.push_back(cleanRun(row));
  const GroupValues base = groupValues(cmp, 0, clean);
  for (int g = 1; g < cmp.groups; ++g) {
    const GroupValues v = groupValues(cmp, g, clean);
    const stats::SpeedupEstimate target = stats::groupSpeedup(base.target, v.target, ruleFor(cmp, "time_to_target_s"));
    const stats::SpeedupEstimate rate = stats::groupRateSpeedup(base.rate, v.rate, ruleFor(cmp, "train_samples_per_s"));
    for (auto& row : cmp.rows)
      if (row.group == g) row.target = target, row.throughput = rate;
  }
}

// The baseline run's own host-speed change: the multipliers against that run alone are withheld;
// a group's estimate that the baseline's clean repeats carry still stands (the run is not among them).
void withholdWhatRestsOnTheBaselineRun(Comparison& cmp, const std::string& baseHost) {
  if (baseHost.empty()) return;
  for (auto& row : cmp.rows) {
    if (row.is_baseline || !row.host_changed.empty()) continue;
    const bool carried = std::isfinite(row.target.point) || std::isfinite(row.throughput.point);
    if (!carried || row.repeat_of_baseline) {
      row.host_changed = "the baseline: " + baseHost;
      continue;
    }
    row.speedup_epoch = row.speedup_throughput = row.speedup_wall = row.speedup_target = std::nullopt;
  }
}

}  // namespace

Comparison compareRuns(const RunRecord& baseline, const std::vector<RunRecord>& runs,
                       std::optional<double> target_acc, const HostNoise& noise, double min_effect) {
  Comparison cmp;
  cmp.noise = noise;
  cmp.min_effect = min_effect;
  std::vector<const RunRecord*> records{&baseline};
  for (const auto& run : runs)
    if (run.dir.empty() || run.dir != baseline.dir) records.push_back(&run);
  cmp.target = fairTargetOf(target_acc, {&baseline}).value_or(FairTarget{});
  cmp.target_user_set = cmp.target.user_set;
  cmp.target_acc = cmp.target.acc;

  const RunMetrics b = computeMetrics(baseline, cmp.target_acc);
  const std::string baseUnfinished = unfinishedNote(baseline.status);
  const std::string baseHost = hostSpeedNote(hostSpeedOf(baseline), noise);
  for (const RunRecord* rec : records) {
    ComparisonRow row;
    row.label = runLabel(*rec);
    row.dir = rec->dir;
    row.is_baseline = rec == &baseline;
    row.m = row.is_baseline ? b : computeMetrics(*rec, cmp.target_acc);
    if (!row.is_baseline) row.diff = configDiff(baseline.config, rec->config);
    row.speedup_epoch = speedupOf(b.time_per_epoch_s, row.m.time_per_epoch_s);
    row.speedup_wall = speedupOf(b.wall_s, row.m.wall_s);
    row.speedup_target = speedupOf(b.time_to_target_s, row.m.time_to_target_s);
    row.speedup_throughput = speedupOf(row.m.train_samples_per_s, b.train_samples_per_s);  // run / baseline
    row.contended = row.is_baseline ? b.contention.note
                    : slowedAlike(*rec, row.m.contention, baseline, b.contention) ? "" : contentionNote(row.m, b);
    row.host_changed = hostSpeedNote(hostSpeedOf(*rec), noise);
    if (!row.is_baseline) {
      row.not_comparable = dataDifference(baseline.config, rec->config);
      row.unfinished = unfinishedNote(rec->status);
      if (row.unfinished.empty() && !baseUnfinished.empty())
        row.unfinished = "the baseline " + (baseline.status == "running" ? std::string("is still running") : baseline.status) +
                         ": no speedup against a run that did not finish";
    }
    if (b.best_val_acc && row.m.best_val_acc) row.delta_best_pp = (*row.m.best_val_acc - *b.best_val_acc) * 100.0;
    if (b.final_val_acc && row.m.final_val_acc) row.delta_final_pp = (*row.m.final_val_acc - *b.final_val_acc) * 100.0;
    if (b.peak_mem_bytes && row.m.peak_mem_bytes && *b.peak_mem_bytes > 0 && *row.m.peak_mem_bytes > 0)
      row.mem_ratio = *row.m.peak_mem_bytes / *b.peak_mem_bytes;
    cmp.rows.push_back(std::move(row));
  }
  assignGroups(cmp, records);
  estimateGroups(cmp);
  withholdWhatRestsOnTheBaselineRun(cmp, baseHost);
  return cmp;
}

Result<double> parseTargetAccuracy(const std::string& textIn) {
  std::string text = textIn;
  bool percent = false;
  if (!text.empty() && text.back() == '%') percent = true, text.pop_back();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v))
    return makeError(Errc::InvalidConfig, "--target-acc " + textIn + ": not a number (use e.g. 0.85 or 85%)");
  const double acc = (percent || v > 1.0) ? v / 100.0 : v;
  if (acc <= 0 || acc > 1.0)
    return makeError(Errc::InvalidConfig, "--target-acc " + textIn + ": must be in (0, 1] or (0, 100] %");
  return acc;
}

}  // namespace wb::compare
