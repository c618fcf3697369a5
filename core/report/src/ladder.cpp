#include "wb/report/ladder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/report/probe.h"

namespace wb::report {
using nlohmann::json;

namespace {

constexpr int kLadderPatience = 2;  // the recipe's early-stopping patience (in evaluations)

const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// A capability's availability; `fallback` when capabilities does not mention it.
bool available(const json& node, bool fallback) {
  const json& a = at(node, {"available"});
  return a.is_boolean() ? a.get<bool>() : fallback;
}
std::string note(const json& node, const std::string& fallback) {
  const json& n = at(node, {"note"});
  return n.is_string() && !n.get<std::string>().empty() ? n.get<std::string>() : fallback;
}
int intOr(const json& j, int fallback) { return j.is_number() ? j.get<int>() : fallback; }

struct Planner {
  const json& caps;
  Config base, cum;
  std::vector<LadderStep> steps;
  std::vector<LadderStep> alone;  // isolated variants
  bool isolated;

  // Adds a cumulative step (and its isolated twin) or a skipped one.
  void add(const std::string& key, const std::string& added, const std::string& skipReason,
           void (*apply)(Config&, const Planner&), std::string caveat = {}) {
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

  int gpus() const { return intOr(at(caps, {"gpus"}), 0); }
  bool cuda() const { return at(caps, {"cuda"}).is_boolean() && caps["cuda"].get<bool>(); }
  int cores() const { return intOr(at(caps, {"cores"}), 1); }
  // The stored worker probe for this machine and experiment (speedups.workers.probe, attached
  // by the caller), else the rule of thumb: wb::report::workersAdvice, as the advisor says it.
  WorkersAdvice workersAdvice() const { return report::workersAdvice(caps); }
  int workers() const {
    const WorkersAdvice a = workersAdvice();
    int w = a.workers;
    const json& max = at(caps, {"speedups", "workers", "max"});
    if (max.is_number()) w = std::min(w, std::max(a.measured ? 0 : 1, max.get<int>()));
    return w;
  }
  int devices() const {
    int d = cuda() ? gpus() : 2;
    const json& max = at(caps, {"speedups", "devices", "max"});
    if (max.is_number()) d = std::min(d, max.get<int>());
    return d;
  }
  std::string precision() const { return cuda() ? "16-mixed" : "bf16-mixed"; }
};

}  // namespace

std::string LadderStep::slug(int index) const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d-", index);
  std::string k = key;
  std::replace(k.begin(), k.end(), '_', '-');
  return isolated ? "alone-" + k : buf + k;
}

Config ladderBaseline(const Config& user) {
  Config c = user;
  c.speedups.workers = 0;
  c.speedups.pin_memory = false;
  c.speedups.devices = 1;
  c.speedups.precision = "32-true";
  c.speedups.early_stopping.patience = 0;
  c.speedups.sharding = "off";
  c.speedups.inference_eval = false;
  return c;
}

std::vector<LadderStep> planLadder(const Config& user, const json& caps, bool isolated) {
  Planner p{caps, ladderBaseline(user), ladderBaseline(user), {}, {}, isolated};
  LadderStep baseline;
  baseline.key = "baseline";
  baseline.added = "all speedups off (workers 0, 32-true, 1 device)";
  baseline.config = p.base;
  p.steps.push_back(baseline);

  const json& sp = at(caps, {"speedups"});
  // workers
  {
    const json& node = at(sp, {"workers"});
    const int w = p.workers();
    const WorkersAdvice advice = p.workersAdvice();
    std::string skip = available(node, true) ? "" : note(node, "loader workers are not available");
    if (skip.empty() && advice.measured && w == 0)
      skip = advice.source() + " recommends 0 workers for this experiment on this machine";
    p.add("workers", "loader workers 0 → " + std::to_string(w), skip,
          [](Config& c, const Planner& pl) { c.speedups.workers = pl.workers(); },
          advice.measured ? "workers from " + advice.source() + " (the smallest count within 2 % of the best)"
                          : "workers from " + advice.source() + "; run `workbench-cli probe workers` to measure the best count");
  }
  // pin memory: CUDA only
  {
    const json& node = at(sp, {"pin_memory"});
    p.add("pin_memory", "pin memory", available(node, p.cuda()) ? "" : note(node, "needs CUDA; not available on this machine"),
          [](Config& c, const Planner&) { c.speedups.pin_memory = true; });
  }
  // devices
  {
    const json& node = at(sp, {"devices"});
    const int d = p.devices();
    std::string skip;
    if (!available(node, true)) skip = note(node, "more devices are not available");
    else if (d < 2) skip = p.cuda() ? "only one GPU on this machine" : "this machine allows only one process per run";
    std::string kind = p.cuda() ? " GPUs" : " CPU processes";
    p.add("devices", "devices 1 → " + std::to_string(std::max(d, 2)) + kind, skip,
          [](Config& c, const Planner& pl) { c.speedups.devices = pl.devices(); },
          p.cuda() || p.cores() >= 2 * std::max(d, 1) ? "" : "the processes share " + std::to_string(p.cores()) + " cores");
  }
  // precision
  {
    const std::string prec = p.precision();
    const json& node = at(sp, {"precision", "values", prec.c_str()});
    const bool ok = available(node, available(at(sp, {"precision"}), true));
    // Emulated bf16 (no AVX-512 BF16 / AMX) only slows a CPU run down, and every later cumulative
    // step would carry that: the ladder says so instead of spending the time.
    const bool emulated = at(node, {"native"}).is_boolean() && !node["native"].get<bool>();
    std::string skip = ok ? "" : note(node, prec + " is not available on this machine");
    if (ok && emulated)
      skip = note(node, prec + " is emulated on this CPU") +
             " (try it alone: workbench-cli run --set speedups.precision=" + prec + ")";
    p.add("precision", "precision 32-true → " + prec, skip,
          [](Config& c, const Planner& pl) { c.speedups.precision = pl.precision(); });
  }
  // early stopping
  {
    const json& node = at(sp, {"early_stopping"});
    const int epochs = user.train.epochs;
    std::string caveat = epochs <= kLadderPatience
                             ? "cannot trigger in " + std::to_string(epochs) + " epoch(s) with patience " +
                                   std::to_string(kLadderPatience)
                             : "";
    p.add("early_stopping", "early stopping (patience " + std::to_string(kLadderPatience) + ")",
          available(node, true) ? "" : note(node, "early stopping is not available"),
          [](Config& c, const Planner&) { c.speedups.early_stopping.patience = kLadderPatience; }, caveat);
  }
  // sharding: needs more than one device in the cumulative config
  {
    const json& node = at(sp, {"sharding"});
    std::string skip;
    if (p.cum.speedups.devices <= 1) skip = "needs devices > 1 (the devices step did not run)";
    else if (!available(node, true)) skip = note(node, "sharding is not available");
    p.add("sharding", "sharding zero1", skip, [](Config& c, const Planner& pl) {
      c.speedups.sharding = "zero1";
      if (c.speedups.devices <= 1) c.speedups.devices = pl.devices();  // alone: bring the devices it needs
    });
    if (!p.alone.empty() && p.alone.back().key == "sharding")
      p.alone.back().added = "sharding zero1 with devices " + std::to_string(p.devices()) + " (alone)";
  }
  // inference-mode evaluation
  {
    const json& node = at(sp, {"inference_eval"});
    p.add("inference_eval", "inference-mode eval", available(node, true) ? "" : note(node, "inference-mode evaluation is not available"),
          [](Config& c, const Planner&) { c.speedups.inference_eval = true; });
  }
  std::vector<LadderStep> out = std::move(p.steps);
  out.insert(out.end(), p.alone.begin(), p.alone.end());
  return out;
}

namespace {

struct Range {
  std::optional<double> mid, lo, hi;
};
Range rangeOf(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

std::string withRange(const std::optional<double>& mid, const std::optional<double>& lo, const std::optional<double>& hi,
                      int n) {
  if (!mid) return "–";
  std::string s = fmtSeconds(*mid);
  if (n >= 2 && lo && hi) s += " (" + fmtSeconds(*lo) + "–" + fmtSeconds(*hi) + ")";
  return s;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The repeat whose wall time is the median: what advice and curves show for a step.
const RunRecord* representative(const LadderStepRuns& s, std::optional<double> target) {
  const RunRecord* best = nullptr;
  double bestDist = 0;
  std::vector<double> walls;
  for (const auto& r : s.runs)
    if (auto w = computeMetrics(r, target).wall_s) walls.push_back(*w);
  const double mid = median(walls);
  for (const auto& r : s.runs) {
    auto w = computeMetrics(r, target).wall_s;
    double dist = w && std::isfinite(mid) ? std::fabs(*w - mid) : 1e300;
    if (!best || dist < bestDist) best = &r, bestDist = dist;
  }
  return best;
}

}  // namespace

namespace {

// One step's repeats: medians, ranges, problems, and the contention of its own measurements.
// Repeats measured under contention are left out of the times when clean ones exist (the ladder
// runs a contended rung again); a step with only contended repeats is itself contended.
LadderRow summarizeStep(const LadderStepRuns& s, std::optional<double> target, std::string* ownContention) {
  LadderRow row;
  row.step = s.step;
  std::vector<double> walls, targets, accs, mems, rates;
  std::vector<std::string> problems = s.failures;
  std::vector<RunMetrics> metrics;
  for (const auto& r : s.runs) {
    metrics.push_back(computeMetrics(r, target));
    ++row.repeats;
    row.run_dirs.push_back(r.dir);
    if (metrics.back().contention.contended) ++row.contended;
    if (r.status != "ok" && r.status != "early-stopped")
      problems.push_back(runLabel(r) + " " + r.status + (r.errors.empty() ? "" : ": " + r.errors.front()));
  }
  const bool allContended = row.contended > 0 && row.contended == row.repeats;
  for (const auto& m : metrics) {
    if (m.contention.contended && !allContended) continue;
    if (m.wall_s) walls.push_back(*m.wall_s);
    if (m.time_to_target_s) targets.push_back(*m.time_to_target_s), ++row.reached;
    if (m.best_val_acc) accs.push_back(*m.best_val_acc);
    if (m.train_samples_per_s) rates.push_back(*m.train_samples_per_s);
    if (m.peak_mem_bytes) mems.push_back(*m.peak_mem_bytes), row.mem_kind = m.peak_mem_kind;
    if (m.contention.contended && ownContention->empty()) *ownContention = m.contention.note;
  }
  if (row.contended > 0 && !allContended)
    problems.push_back(std::to_string(row.contended) + " repeat(s) measured under contention left out");
  const Range w = rangeOf(walls), t = rangeOf(targets);
  row.wall_s = w.mid, row.wall_min = w.lo, row.wall_max = w.hi;
  row.target_s = t.mid, row.target_min = t.lo, row.target_max = t.hi;
  if (!accs.empty()) row.val_acc = median(accs);
  if (!rates.empty()) row.train_sps = median(rates);
  if (!mems.empty()) row.peak_mem = median(mems);
  for (const auto& p : problems) row.problems += (row.problems.empty() ? "" : "; ") + p;
  return row;
}

void addNote(std::string& into, const std::string& who, const std::string& note) {
  if (note.empty()) return;
  into += (into.empty() ? "" : "; ") + who + note;
}

}  // namespace

Ladder summarizeLadder(const std::vector<LadderStepRuns>& steps, std::optional<double> target_acc) {
  Ladder ladder;
  ladder.target_user_set = target_acc.has_value();
  ladder.target_acc = target_acc;
  if (!target_acc) {
    for (const auto& s : steps) {
      if (s.step.key != "baseline") continue;
      for (const auto& r : s.runs)
        if (auto best = computeMetrics(r, std::nullopt).best_val_acc)
          ladder.target_acc = ladder.target_acc ? std::min(*ladder.target_acc, *best) : *best;
    }
  }
  // Indices, not pointers: the rows vector grows. own[i]: row i's own contention.
  std::optional<size_t> baseline, previous;
  std::vector<std::string> own;
  ladder.rows.reserve(steps.size());
  for (const auto& s : steps) {
    own.emplace_back();
    ladder.rows.push_back(summarizeStep(s, ladder.target_acc, &own.back()));
    const size_t i = ladder.rows.size() - 1;
    LadderRow& added = ladder.rows[i];
    if (s.step.key == "baseline") baseline = i;
    addNote(added.contention, "", own[i]);
    if (baseline && !s.step.skipped) {
      const LadderRow& base = ladder.rows[*baseline];
      added.cumulative = speedupOf(base.wall_s, added.wall_s);
      added.cumulative_target = speedupOf(base.target_s, added.target_s);
      if (*baseline != i) addNote(added.contention, "the baseline: ", own[*baseline]);
      if (!s.step.isolated && previous && i != *baseline) {
        const LadderRow& prev = ladder.rows[*previous];
        added.marginal = speedupOf(prev.wall_s, added.wall_s);
        added.marginal_target = speedupOf(prev.target_s, added.target_s);
        if (*previous != *baseline) addNote(added.contention, "the step before: ", own[*previous]);
      }
    }
    if (!s.step.isolated && !s.step.skipped && added.wall_s) previous = i;
  }
  return ladder;
}

LadderHeadline ladderHeadline(const LadderRow& row) {
  LadderHeadline h;
  if (row.val_acc) h.detail = "acc " + fmtFixed(*row.val_acc * 100.0, 1) + " %";
  if (row.step.skipped) return {std::nullopt, "skipped", ""};
  if (row.repeats == 0) return {std::nullopt, "–", ""};
  if (!row.contention.empty()) h.text = kContendedText;
  else if (!row.target_s) h.text = "not reached";
  else if (!row.cumulative_target) h.text = "–";
  else h.speedup = row.cumulative_target, h.text = fmtSpeedup(*row.cumulative_target);
  return h;
}

namespace {

// "not reached · 62.8 %": the headline and the accuracy behind it, in one cell.
Cell headlineCell(const LadderRow& row) {
  const LadderHeadline h = ladderHeadline(row);
  if (h.speedup) return Cell::num(h.text, *h.speedup);
  if (h.text == "not reached" && row.val_acc) return Cell::str(h.text + " · " + fmtFixed(*row.val_acc * 100.0, 1) + " %");
  return Cell::str(h.text);
}

Cell targetTimeCell(const LadderRow& row) {
  if (!row.target_s) return Cell::str(row.repeats == 0 ? "–" : "not reached");
  Cell c = Cell::num(withRange(row.target_s, row.target_min, row.target_max, row.reached), *row.target_s);
  if (row.reached < row.repeats) c.text += " (" + std::to_string(row.reached) + "/" + std::to_string(row.repeats) + " reached)";
  return c;
}

std::vector<Cell> ladderCells(const LadderRow& row, const std::string& stepName) {
  std::vector<Cell> cells{Cell::str(stepName), Cell::str(row.step.added)};
  if (row.step.skipped) {
    for (int i = 0; i < 9; ++i) cells.push_back(Cell::str("–"));
    cells.push_back(Cell::str("skipped: " + row.step.note));
    return cells;
  }
  const bool contended = !row.contention.empty();
  Cell wall = optCell(row.wall_s, fmtSeconds);
  wall.text = withRange(row.wall_s, row.wall_min, row.wall_max, row.repeats);
  Cell mem = optCell(row.peak_mem, fmtBytes);
  if (row.peak_mem) mem.text += " (" + row.mem_kind + ")";
  std::string noteText = row.step.note;
  if (contended) noteText += (noteText.empty() ? "" : "; ") + std::string("contended: ") + row.contention;
  if (!row.problems.empty()) noteText += (noteText.empty() ? "" : "; ") + row.problems;
  const bool reached = row.target_s.has_value();
  cells.insert(cells.end(), {targetTimeCell(row), headlineCell(row),
                             reached ? speedupCell(row.marginal_target, contended) : Cell::str("–"),
                             optCell(row.val_acc, fmtAccuracy), optCell(row.train_sps, fmtRate), wall,
                             speedupCell(row.cumulative, contended), speedupCell(row.marginal, contended), mem,
                             Cell::str(noteText)});
  return cells;
}

}  // namespace

Table ladderTable(const Ladder& ladder) {
  Table t;
  const std::string target = ladder.target_acc ? fmtAccuracy(*ladder.target_acc) : std::string("target");
  t.title = "Speedup ladder (target val acc " +
            (ladder.target_acc ? target + (ladder.target_user_set ? ", set by the user)" : ", the baseline's best)")
                               : std::string("unknown: the baseline has no evaluation)"));
  t.columns = {{"step", "Step", ""},
               {"added", "What was added", ""},
               {"time_to_target_s", "Time to " + target, "s"},
               {"cumulative_target", "× to target", "x"},
               {"marginal_target", "Step × to target", "x"},
               {"val_acc", "Best val acc", "fraction"},
               {"train_samples_per_s", "Train samples/s", "1/s"},
               {"wall_s", "Wall time", "s"},
               {"cumulative", "× wall", "x"},
               {"marginal", "Step × wall", "x"},
               {"peak_mem_bytes", "Peak memory", "bytes"},
               {"note", "Note", ""}};
  int index = 0, repeats = 0;
  bool anyContended = false;
  for (const auto& row : ladder.rows) {
    t.rows.push_back(ladderCells(row, row.step.isolated ? "alone" : std::to_string(index++)));
    repeats = std::max(repeats, row.repeats);
    anyContended = anyContended || !row.contention.empty();
  }
  t.notes.push_back("× to target (the headline): the baseline's time to the target accuracy ÷ this step's, so the "
                    "speedup is at equal accuracy; \"not reached\" gives the accuracy the step reached instead.");
  t.notes.push_back("Step ×: the step before ÷ this step. × wall: the same on wall time, whatever accuracy was reached. "
                    "Train samples/s: training steps only (no evaluation, checkpoints or set-up).");
  if (anyContended)
    t.notes.push_back("contended: measured while another process used the CPU; the speedups are not shown "
                      "(see the note) — rerun the ladder on an idle machine.");
  if (repeats >= 2)
    t.notes.push_back("Times are medians over " + std::to_string(repeats) + " repeats, with the min–max range.");
  return t;
}

Drawing ladderChart(const Ladder& ladder) { return barChart(ladderBars(ladder)); }

namespace {

std::string barLabel(const LadderRow& row) {
  std::string label = row.step.key == "baseline" ? std::string("baseline") : "+ " + row.step.key;
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

// Without a target accuracy nothing is at equal accuracy: wall time, and the title says so.
BarChartSpec wallBars(const Ladder& ladder) {
  BarChartSpec spec;
  spec.title = "Speedup ladder: wall-time speedup (no target accuracy: the baseline has no evaluation)";
  spec.y_label = "wall-time speedup (×)";
  for (const auto& row : ladder.rows) {
    if (row.step.isolated) continue;
    Bar b;
    b.label = barLabel(row);
    const bool valid = row.cumulative && row.contention.empty() && !row.step.skipped;
    b.skipped = !valid;
    b.value = valid ? *row.cumulative : 0;
    b.annotation = valid ? fmtSpeedup(*row.cumulative)
                         : row.step.skipped ? "skipped" : !row.contention.empty() ? kContendedText : "no result";
    spec.bars.push_back(b);
  }
  return spec;
}

}  // namespace

BarChartSpec ladderBars(const Ladder& ladder) {
  if (!ladder.target_acc) return wallBars(ladder);
  BarChartSpec spec;
  spec.title = "Speedup ladder: speedup to " + fmtAccuracy(*ladder.target_acc) + " val acc over the baseline";
  spec.y_label = "speedup at equal accuracy (×)";
  for (const auto& row : ladder.rows) {
    if (row.step.isolated) continue;
    const LadderHeadline h = ladderHeadline(row);
    Bar b;
    b.label = barLabel(row);
    b.skipped = !h.speedup;
    b.value = h.speedup.value_or(0);
    b.annotation = h.text;
    b.detail = h.detail;
    spec.bars.push_back(b);
  }
  return spec;
}

json ladderJson(const Ladder& ladder) {
  json rows = json::array();
  for (const auto& row : ladder.rows) {
    rows.push_back({{"key", row.step.key},
                    {"added", row.step.added},
                    {"isolated", row.step.isolated},
                    {"skipped", row.step.skipped},
                    {"note", row.step.note},
                    {"problems", row.problems},
                    {"repeats", row.repeats},
                    {"reached_target", row.reached},
                    {"wall_s", {{"median", opt(row.wall_s)}, {"min", opt(row.wall_min)}, {"max", opt(row.wall_max)}}},
                    {"time_to_target_s", {{"median", opt(row.target_s)}, {"min", opt(row.target_min)}, {"max", opt(row.target_max)}}},
                    {"headline", "cumulative_to_target"},
                    {"speedup", {{"cumulative", opt(row.cumulative)}, {"marginal", opt(row.marginal)},
                                 {"cumulative_to_target", opt(row.cumulative_target)},
                                 {"marginal_to_target", opt(row.marginal_target)}}},
                    {"contended_repeats", row.contended},
                    {"contention", row.contention},
                    {"best_val_acc", opt(row.val_acc)},
                    {"train_samples_per_s", opt(row.train_sps)},
                    {"peak_mem_bytes", opt(row.peak_mem)},
                    {"peak_mem_kind", row.mem_kind},
                    {"config", proto::configToJson(row.step.config)},
                    {"run_dirs", row.run_dirs}});
  }
  return {{"target_acc", opt(ladder.target_acc)}, {"target_user_set", ladder.target_user_set}, {"steps", rows}};
}

namespace {

std::optional<double> optNum(const json& j) {
  if (!j.is_number()) return std::nullopt;
  return j.get<double>();
}

}  // namespace

Result<Ladder> ladderFromJson(const json& docIn) {
  const json& doc = docIn.contains("ladder") ? docIn["ladder"] : docIn;
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return makeError(Errc::InvalidConfig, "not a ladder: no \"steps\" list (expected a ladder.json written by workbench-cli ladder)");
  Ladder ladder;
  ladder.target_acc = optNum(doc.value("target_acc", json()));
  ladder.target_user_set = doc.value("target_user_set", false);
  for (const json& s : doc["steps"]) {
    if (!s.is_object()) continue;
    LadderRow row;
    row.step.key = s.value("key", "");
    row.step.added = s.value("added", "");
    row.step.isolated = s.value("isolated", false);
    row.step.skipped = s.value("skipped", false);
    row.step.note = s.value("note", "");
    if (s.contains("config")) {
      if (auto c = proto::configFromJson(s["config"]); c.ok()) row.step.config = *c;
    }
    row.problems = s.value("problems", "");
    row.repeats = s.value("repeats", 0);
    row.reached = s.value("reached_target", 0);
    const json wall = s.value("wall_s", json::object()), target = s.value("time_to_target_s", json::object()),
               speed = s.value("speedup", json::object());
    row.wall_s = optNum(wall.value("median", json())), row.wall_min = optNum(wall.value("min", json())),
    row.wall_max = optNum(wall.value("max", json()));
    row.target_s = optNum(target.value("median", json())), row.target_min = optNum(target.value("min", json())),
    row.target_max = optNum(target.value("max", json()));
    row.cumulative = optNum(speed.value("cumulative", json()));
    row.marginal = optNum(speed.value("marginal", json()));
    row.cumulative_target = optNum(speed.value("cumulative_to_target", json()));
    row.marginal_target = optNum(speed.value("marginal_to_target", json()));
    row.contended = intOr(s.value("contended_repeats", json()), 0);
    const json contention = s.value("contention", json());
    row.contention = contention.is_string() ? contention.get<std::string>() : "";
    row.train_sps = optNum(s.value("train_samples_per_s", json()));
    row.val_acc = optNum(s.value("best_val_acc", json()));
    row.peak_mem = optNum(s.value("peak_mem_bytes", json()));
    row.mem_kind = s.value("peak_mem_kind", "");
    for (const auto& d : s.value("run_dirs", json::array()))
      if (d.is_string()) row.run_dirs.push_back(d.get<std::string>());
    ladder.rows.push_back(std::move(row));
  }
  return ladder;
}

Result<Ladder> loadLadder(const std::string& dirOrFile) {
  std::filesystem::path p(dirOrFile);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p /= "ladder.json";
  auto doc = proto::readJsonFile(p);
  if (!doc.ok()) return makeError(Errc::Io, doc.error().message + " (pick a folder written by workbench-cli ladder --out)");
  auto ladder = ladderFromJson(*doc);
  if (!ladder.ok()) return makeError(Errc::InvalidConfig, p.string() + ": " + ladder.error().message);
  return ladder;
}

Report buildLadderReport(const Ladder& ladder, const std::vector<LadderStepRuns>& steps, const StoredProbes& probes) {
  Report r;
  r.title = "Speedup ladder";
  r.intro = "The baseline runs with every speedup off; each following step adds one speedup to the previous step. "
            "What this machine cannot do is skipped with the reason. The headline is the speedup at equal accuracy (time to "
            "the target accuracy); a step that never reached the target has none and shows the accuracy it reached. "
            "A step measured while another process used the CPU shows no speedup.";
  r.tables.push_back(ladderTable(ladder));
  r.figures.push_back({"ladder", ladderChart(ladder), "ladder.svg"});

  std::vector<const RunRecord*> curves;
  const RunRecord* previous = nullptr;
  for (const auto& s : steps) {
    const RunRecord* rep = representative(s, ladder.target_acc);
    if (!rep) continue;
    const RunMetrics m = computeMetrics(*rep, ladder.target_acc);
    // Advice against the step this one builds on (isolated steps: the baseline).
    const RunRecord* ref = s.step.isolated ? (curves.empty() ? nullptr : curves.front()) : previous;
    std::optional<RunMetrics> rm;
    if (ref) rm = computeMetrics(*ref, ladder.target_acc);
    std::string label = s.step.key + (s.step.isolated ? " (alone)" : "") + " — " + runLabel(*rep);
    auto verdicts = advise(*rep, m, ref, rm ? &*rm : nullptr, probeFor(probes, *rep));
    // A cumulative step repeats what the step before it was told: show only what is new.
    if (ref && !s.step.isolated) {
      const auto before = advise(*ref, *rm, nullptr, nullptr, probeFor(probes, *ref));
      verdicts.erase(std::remove_if(verdicts.begin(), verdicts.end(),
                                    [&](const Verdict& v) {
                                      return std::any_of(before.begin(), before.end(),
                                                         [&](const Verdict& b) { return b.code == v.code && b.text == v.text; });
                                    }),
                     verdicts.end());
    }
    r.advice.push_back({label, std::move(verdicts)});
    if (!s.step.isolated) {
      curves.push_back(rep);
      previous = rep;
    }
    if (r.machine.empty()) r.machine = machineInfo(rep->env);
  }
  if (!curves.empty()) r.figures.push_back({"accuracy", accuracyCurves(curves), ""});
  r.data["ladder"] = ladderJson(ladder);
  return r;
}

}  // namespace wb::report
