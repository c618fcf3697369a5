// The batch-size finder (wb/tune/batch_finder.h).
#include "wb/tune/batch_finder.h"

#include <algorithm>
#include <cmath>

#include "tune_internal.h"
#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/common/lr_scaling.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/render/table.h"
#include "wb/proto/record_files.h"

namespace wb::tune {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<int> batchSizes(int base, int max) {
  std::vector<int> out{std::max(1, base)};
  for (int i = 0;; ++i) {
    const double next = out.back() * (i % 2 == 0 ? 1.5 : 4.0 / 3.0);
    int b = static_cast<int>(std::lround(next));
    if (b >= 16) b = (b + 4) / 8 * 8;
    if (b <= out.back()) b = out.back() + 1;
    if (b > max) break;
    out.push_back(b);
  }
  return out;
}

bool looksLikeAllocationFailure(const std::string& e) {
  for (const char* s : {"out of memory", "bad_alloc", "Cannot allocate", "CUDA error: out of memory", "OutOfMemory", "signal 9", "SIGKILL"})
    if (e.find(s) != std::string::npos) return true;
  return false;
}

namespace {

class BatchFinder {
 public:
  explicit BatchFinder(const BatchOptions& o) : o_(o) {}
  Result<BatchOutcome> run();

 private:
  bool stopped() const { return o_.hooks.stopRequested(); }
  void say(const std::string& s) const {
    if (o_.hooks.log) std::fprintf(o_.hooks.log, "%s\n", s.c_str()), std::fflush(o_.hooks.log);
  }
  Status load();
  proto::BatchPoint measure(int b);
  std::string stopReason(size_t i, int flatRuns) const;
  void choose();
  Status checkAccuracy();
  Status save() { return writeFileAtomic(o_.out / proto::kBatchFile, proto::toJson(r_).dump(2) + "\n"); }

  const BatchOptions& o_;
  proto::TuneBatch r_;
  std::vector<proto::BatchPoint> previous_;
  bool cancelled_ = false;
  bool reused_ = false;  // the last size measured came from the cut search before
};

// "" when `had` (a batch.json) searched from the same config and lr rule; else what differs.
std::string searchDifference(const proto::TuneBatch& had, const json& config, const std::string& rule) {
  if (!had.lr_rule.empty() && had.lr_rule != rule) return "its lr rule is " + had.lr_rule + ", " + rule + " now";
  if (had.config.is_null()) return {};
  json a = had.config, b = config;
  a.erase("name"), b.erase("name");  // the name says nothing about what runs
  const json patch = json::diff(a, b);
  if (patch.empty()) return {};
  std::string field = patch[0].value("path", "");
  std::replace(field.begin(), field.end(), '/', '.');
  return "its config differs in " + (field.empty() ? field : field.substr(1));
}

// A cut search in the folder: its finished sizes are kept; another search's folder is refused.
Status BatchFinder::load() {
  const proto::StoredRecord doc = proto::readRecordFile(o_.out / proto::kBatchFile);
  if (doc.missing()) return {};
  if (doc.unreadable())
    return proto::unreadableError(o_.out / proto::kBatchFile, doc.why, "its runs in " + (o_.out / "runs").string() +
                                                                      " are kept: restore it from a copy, or choose a new --out");
  const proto::TuneBatch had = proto::readTuneBatch(doc.doc);
  if (const std::string d = searchDifference(had, proto::configToJson(o_.base), o_.lr_rule); !d.empty())
    return makeError(Errc::InvalidConfig, o_.out.string() + " holds another batch search (" + d +
                                              "): continue it with the options it was started with, or choose a new --out");
  for (const auto& p : had.points)
    if (p.status != proto::kStatusCancelled && !p.status.empty()) previous_.push_back(p);
  say("[batch] continuing the batch finder in " + o_.out.string() + ": " + std::to_string(previous_.size()) + " finished size(s) kept");
  return {};
}

proto::BatchPoint BatchFinder::measure(int b) {
  for (const auto& p : previous_)
    if (p.batch == b) return reused_ = true, p;
  reused_ = false;
  proto::BatchPoint p;
  p.batch = b;
  Config c = trialConfig(withBatch(o_.base, b, o_.lr_rule), o_.trial_samples, 256);
  c.name += " / batch " + std::to_string(b);
  std::error_code ec;
  fs::path dir = o_.out / "runs" / ("b" + std::to_string(b));
  for (int k = 2; fs::exists(dir, ec); ++k) dir = o_.out / "runs" / ("b" + std::to_string(b) + "-r" + std::to_string(k));
  p.run_dir = dir.string();
  auto outcome = experiment::launchOne(c, dir, o_.user_command, o_.hooks.cli_path, "batch " + std::to_string(b));
  if (!outcome.ok()) {
    p.status = proto::kStatusFailed, p.error = outcome.error().message;
  } else {
    p.status = outcome->status;
    if (outcome->summary.error) p.error = *outcome->summary.error;
    if (outcome->summary.log_tail && p.error.find("memory") == std::string::npos) p.error += (p.error.empty() ? "" : " | ") + *outcome->summary.log_tail;
    if (auto rec = records::loadRun(p.run_dir); rec.ok()) {
      proto::TuneTrial t;
      readTrialFigures(*rec, t);
      p.train_samples_per_s = t.train_samples_per_s;
      p.peak_mem = t.peak_mem;
    }
  }
  p.allocation_failed = p.status == proto::kStatusFailed && looksLikeAllocationFailure(p.error);
  if (p.status == proto::kStatusCancelled && stopped()) cancelled_ = true;
  return p;
}

// Why not go past point i: "" to go on.
std::string BatchFinder::stopReason(size_t i, int flatRuns) const {
  const proto::BatchPoint& p = r_.points[i];
  if (p.allocation_failed) return "allocation failed at " + std::to_string(p.batch) + ": the limit";
  if (p.status != proto::kStatusOk) return "the trial at " + std::to_string(p.batch) + " failed (" + p.status + "): the limit";
  if (flatRuns >= 2) return "two sizes in a row gained no more than the noise band (" + wb::fmtFixed(o_.band * 100, 1) + " %)";
  if (i >= 1 && o_.memory_free && r_.points[0].peak_mem && p.peak_mem) {
    const auto& q = r_.points[i - 1];
    const double perImage = q.peak_mem && p.batch > q.batch ? std::max(0.0, double(*p.peak_mem - *q.peak_mem) / (p.batch - q.batch)) : 0;
    const std::vector<int> sizes = batchSizes(r_.base, o_.max_batch);
    const auto at = std::find(sizes.begin(), sizes.end(), p.batch);
    if (at != sizes.end() && at + 1 != sizes.end()) {
      const double next = *p.peak_mem + perImage * (*(at + 1) - p.batch);
      const double limit = *r_.points[0].peak_mem + (1 - o_.margin) * *o_.memory_free;
      if (next > limit)
        return "the next size would need about " + wb::fmtBytes(next) + " (" + o_.memory_kind + ", per rank), past the " +
               wb::fmtBytes(limit) + " that leaves " + wb::fmtFixed(o_.margin * 100, 0) + " % of the free memory free";
    }
  }
  return {};
}

void BatchFinder::choose() {
  double best = 0;
  for (const auto& p : r_.points)
    if (p.status == proto::kStatusOk && p.train_samples_per_s) best = std::max(best, *p.train_samples_per_s);
  r_.chosen = r_.base;
  for (const auto& p : r_.points)  // sizes ascend: the first within the noise of the fastest
    if (p.status == proto::kStatusOk && p.train_samples_per_s && *p.train_samples_per_s >= best * (1 - o_.band)) {
      r_.chosen = p.batch;
      break;
    }
  const Config c = withBatch(o_.base, r_.chosen, o_.lr_rule);
  r_.lr_note = lrScaling(c.optim, c.speedups.devices, 0, c.train.batch_size).note;
}

// One pair of full runs, the config as given and the chosen: did the accuracy hold?
Status BatchFinder::checkAccuracy() {
  if (!o_.check_accuracy || r_.chosen == r_.base || cancelled_) return {};
  experiment::Plan plan;
  plan.reference = {"baseline", "the config as given", "baseline", 0, o_.base};
  plan.variants = {{"batch", "batch " + std::to_string(r_.chosen), "batch", 1, withBatch(o_.base, r_.chosen, o_.lr_rule)}};
  plan.steps = 2;
  plan.user_command = o_.user_command;
  experiment::Policy policy = o_.policy;
  policy.fixed_pairs = std::max(1, policy.fixed_pairs);
  auto outcome = experiment::runPairs(plan, policy, o_.out / "accuracy", o_.hooks);
  if (!outcome.ok()) return outcome.error();
  if (outcome->cancelled) return cancelled_ = true, Status{};
  const auto target = outcome->target_acc;
  double best = 0;
  bool reached = false;
  for (const auto& v : outcome->variants)
    for (const auto& run : v.variants) {
      const auto m = compare::computeMetrics(run, target);
      best = std::max(best, m.best_val_acc.value_or(0.0));
      reached = reached || m.time_to_target_s.has_value();
    }
  r_.accuracy = {{"target", target ? json(*target) : json()}, {"best", best}, {"reached", reached},
                 {"dir", (o_.out / "accuracy").string()}};
  if (!reached) {
    r_.stopped += "; the accuracy did not hold at " + std::to_string(r_.chosen) + " (best " + wb::fmtAccuracy(best) +
                  (target ? " < " + wb::fmtAccuracy(*target) : std::string()) + "): keep " + std::to_string(r_.base);
    r_.chosen = r_.base;
  }
  return {};
}

Result<BatchOutcome> BatchFinder::run() {
  std::error_code ec;
  fs::create_directories(o_.out / "runs", ec);
  if (ec) return makeError(Errc::Io, o_.out.string() + ": cannot create it: " + ec.message());
  if (auto st = load(); !st.ok()) return st.error();
  r_.config = proto::configToJson(o_.base);
  r_.base = o_.base.train.batch_size;
  r_.devices = o_.base.speedups.devices;
  r_.margin = o_.margin;
  r_.memory_free = o_.memory_free;
  r_.memory_kind = o_.memory_kind;
  r_.lr_rule = o_.lr_rule;
  if (!fs::exists(o_.out / proto::kBatchFile, ec))  // the folder is this search's from the start: a cut one continues
    if (auto st = save(); !st.ok()) return st.error();
  double fastest = 0;
  int flat = 0;
  for (int b : batchSizes(r_.base, o_.max_batch)) {
    const bool kept = std::any_of(previous_.begin(), previous_.end(), [b](const proto::BatchPoint& p) { return p.batch == b; });
    if ((stopped() || cancelled_) && !kept) break;  // a size measured before stays in batch.json
    if (o_.train_images > 0 && b > o_.train_images / 4) {
      r_.stopped = "the next size is over a quarter of the training images";
      break;
    }
    r_.points.push_back(measure(b));
    const auto& p = r_.points.back();
    if (cancelled_) break;
    const double sps = p.train_samples_per_s.value_or(0);
    flat = sps > fastest * (1 + o_.band) ? 0 : flat + 1;
    fastest = std::max(fastest, sps);
    say("[batch] " + std::to_string(b) + ": " + (p.train_samples_per_s ? wb::fmtRate(sps) + " training" : p.status) +
        (p.peak_mem ? ", peak " + wb::fmtBytes(double(*p.peak_mem)) : "") + (reused_ ? " (kept from before)" : ""));
    if (auto st = save(); !st.ok()) return st.error();
    r_.stopped = stopReason(r_.points.size() - 1, flat);
    if (!r_.stopped.empty()) break;
  }
  if (r_.stopped.empty() && !cancelled_ && !stopped()) r_.stopped = "reached the largest size asked (" + std::to_string(o_.max_batch) + ")";
  choose();
  if (auto st = checkAccuracy(); !st.ok()) return st.error();
  if (auto st = save(); !st.ok()) return st.error();
  BatchOutcome out;
  out.record = r_;
  out.chosen = withBatch(o_.base, r_.chosen, o_.lr_rule);
  out.cancelled = cancelled_ || stopped();
  return out;
}

}  // namespace

Status commandTakesTrials(const experiment::UserCommand& command, const std::string& who) {
  if (!command.set()) return {};
  if (auto fields = proto::commandFields(command.text); !fields.ok()) return fields.error();
  if (proto::commandReads(command.text, "train.max_steps")) return {};
  return makeError(Errc::InvalidConfig, who + " --command: the command has no {train.max_steps}: each trial trains a fraction of an "
                                              "epoch, so the script must stop after that many steps (add --max-steps {train.max_steps} "
                                              "or your script's equivalent), or compare settings with try or ladder --command");
}

Result<BatchOutcome> findBatch(const BatchOptions& options) {
  if (auto st = commandTakesTrials(options.user_command, "tune batch"); !st.ok()) return st.error();
  if (options.user_command.set() && !proto::commandReads(options.user_command.text, "train.batch_size"))
    return makeError(Errc::InvalidConfig, "tune batch --command: the command has no {train.batch_size}: the finder cannot set the batch size");
  BatchOptions o = options;
  if (o.trial_samples <= 0) o.trial_samples = std::max<int64_t>(1024, o.train_images / 10);
  return BatchFinder(o).run();
}

}  // namespace wb::tune
