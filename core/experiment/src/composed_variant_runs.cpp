// A try by parts: the variant's runs to the target (composed_inputs.h).
#include "composed_inputs.h"

#include "wb/experiment/composed_try.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>

#include "wb/common/fs.h"
#include "wb/common/lr_scaling.h"
#include "wb/common/speedups.h"
#include "composed_speed.h"
#include "composed_words.h"
#include "wb/launch/tool_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/run_status.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/records/host.h"
#include "wb/records/math_record.h"
#include "wb/records/speed_record.h"
#include "wb/stats/time_to_target_json.h"
#include "wb/stats/variant_looks.h"
#include "wb/report/whatif.h"
#include "wb/proto/record_files.h"

namespace wb::experiment::detail {
namespace fs = std::filesystem;
using nlohmann::json;

bool capEndsTheRun(const Config& c, int64_t trainSamples) { return c.optim.schedule == "constant" && trainSamples > 0; }

namespace {

// A variant run to the target: from `seed`, evaluating as often (in samples) as the references,
// stopping at the target or at the cap (capEndsTheRun), on as many threads as they had.
Config variantRunConfig(const TryOptions& o, uint64_t seed, const VariantPlan& p) {
  Config c = o.variant;
  const int64_t global = samplesPerStep(c);
  c.seed = seed;
  c.name = o.variant.name + "-to-target-" + std::to_string(seed);
  c.train.stop_at_accuracy = p.target;
  c.train.eval_every_steps = std::max<int64_t>(1, std::llround(p.resolution / double(global)));
  if (c.train.threads == 0) c.train.threads = p.threads;
  if (capEndsTheRun(c, p.train_samples)) {
    c.train.epochs = std::max(c.train.epochs, int(std::ceil(p.cap_samples / double(p.train_samples))));
    c.train.max_steps = std::max<int64_t>(1, int64_t(std::ceil(p.cap_samples / double(global))));
  }
  return c;
}

}  // namespace


VariantSlot variantSlot(const TryOptions& o, int index) {
  VariantSlot s;
  s.seed = kFirstReferenceSeed + uint64_t(index);
  const std::string stem = "runs/variant-seed-" + std::to_string(s.seed);
  s.dir = o.out / stem;
  std::error_code ec;
  const auto finished = [](const fs::path& dir) {
    auto run = finishedTargetRun(dir);
    return run ? run : finishedTargetRun(dir.string() + ".rerun");
  };
  for (int k = 2; fs::exists(s.dir, ec) && !(s.kept = finished(s.dir)); ++k) s.dir = o.out / (stem + "-r" + std::to_string(k));
  return s;
}

namespace {

// The variant's run to the target from the references' `index`th seed, the cores shared among
// those side by side when `shared`; a finished one is kept.
Result<records::RunRecord> variantRun(const TryOptions& o, const VariantPlan& p, const Hooks& h, int index, bool shared) {
  if (h.stopRequested()) return makeError(Errc::Cancelled, "the variant's runs to the target were stopped");
  VariantSlot slot = variantSlot(o, index);
  if (slot.kept) return std::move(*slot.kept);
  const uint64_t seed = slot.seed;
  const fs::path& dir = slot.dir;
  if (h.log)
    std::fprintf(h.log, "variant run to the target, seed %llu -> %s%s\n", (unsigned long long)seed, dir.c_str(), progressTime(h).c_str());
  Config c = variantRunConfig(o, seed, p);
  if (shared) c = sharingTheCores(c, p.at_once);
  auto out = launchOne(c, dir, UserCommand{}, h.cli_path, "the variant, seed " + std::to_string(seed));
  if (!out.ok()) return out.error();
  auto run = finishedTargetRun(dir);
  if (!run) return makeError(Errc::Internal, "the variant's run " + dir.string() + " ended " + out->status + ": see its logs");
  return std::move(*run);
}

// The variant's runs `first`, ... (`n` of them) handed at once to where they run (a cluster's job
// array); those finished before are kept. In seed order; a run that did not finish is the error.
Result<std::vector<records::RunRecord>> variantsElsewhere(const TryOptions& o, const VariantPlan& p, const Hooks& h, int first, int n) {
  std::vector<VariantSlot> slots;
  std::vector<ConfigRun> todo;
  for (int i = 0; i < n; ++i) {
    slots.push_back(variantSlot(o, first + i));
    const VariantSlot& s = slots.back();
    if (s.kept) continue;
    if (h.log) std::fprintf(h.log, "variant run to the target, seed %llu -> %s (a task of the array)\n", (unsigned long long)s.seed, s.dir.c_str());
    todo.push_back({variantRunConfig(o, s.seed, p), s.dir,
                    "the variant, seed " + std::to_string(s.seed)});
  }
  auto ends = todo.empty() ? Result<std::vector<ConfigRunEnd>>(std::vector<ConfigRunEnd>{}) : p.elsewhere(todo);
  if (!ends.ok()) return ends.error();
  std::vector<records::RunRecord> runs;
  size_t next = 0;
  for (auto& s : slots) {
    if (s.kept) {
      runs.push_back(std::move(*s.kept));
      continue;
    }
    const ConfigRunEnd& end = (*ends)[next++];
    auto run = finishedTargetRun(end.dir);
    if (!run)
      return makeError(Errc::Internal, "the variant's run " + end.dir.string() + " ended " + end.status +
                                           (end.problem.empty() ? ": see its logs" : ": " + end.problem));
    runs.push_back(std::move(*run));
  }
  return runs;
}

}  // namespace

Result<std::vector<records::RunRecord>> variantWave(const TryOptions& o, const VariantPlan& p, const Hooks& h, int first, int n) {
  if (p.elsewhere && first > 0) return variantsElsewhere(o, p, h, first, n);
  std::vector<std::optional<Result<records::RunRecord>>> ends(size_t(std::max(1, n)));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back([&, i] { ends[size_t(i)] = variantRun(o, p, h, first + i, n > 1); });
  for (auto& t : threads) t.join();
  std::vector<records::RunRecord> runs;
  for (auto& end : ends) {
    if (!end->ok()) return end->error();
    runs.push_back(std::move(**end));
  }
  return runs;
}

// The reference runs' train.threads when they shared the cores (sharingTheCores set it), else 0:
// the variant's runs take the same, so that its first run, alone, starts and evaluates on as many
// threads as the reference runs it is weighed against (not on all the cores, 2 against 1 here).
int referenceThreads(const std::vector<records::RunRecord>& runs) {
  if (runs.empty()) return 0;
  const json train = runs.front().config.value("train", json::object());
  return train.is_object() ? train.value("threads", 0) : 0;
}

}  // namespace wb::experiment::detail
