// A variant's speedups from its pairs: the per-pair times go to wb::stats::pairedSpeedup (the
// statistics and why are there); a pair whose variant did not reach the target gives no
// time-to-target ratio.
#include <algorithm>
#include <cmath>

#include "wb/experiment/paired_runner.h"
#include "wb/proto/event_types.h"
#include "wb/compare/compare.h"
#include "wb/records/noise.h"

namespace wb::experiment {

namespace {

bool endedOk(const records::RunRecord& r) { return r.status == proto::kStatusOk || r.status == proto::kStatusEarlyStopped; }

}  // namespace

bool VariantRuns::counted(size_t i) const {
  if (i >= references.size() || i >= variants.size()) return false;
  const auto& a = references[i];
  const auto& b = variants[i];
  return endedOk(a) && endedOk(b) &&
         compare::slowedAlike(a, compare::contentionOf(a), b, compare::contentionOf(b));
}

int VariantRuns::countedPairs() const {
  int n = 0;
  for (size_t i = 0; i < pairs.size(); ++i) n += counted(i) ? 1 : 0;
  return n;
}

int VariantRuns::usablePairs() const {
  const double checkBand = records::loadNoise(records::thisMachine()).hostKernelBand();
  int n = 0;
  for (size_t i = 0; i < pairs.size(); ++i) n += counted(i) && !compare::hostChangedOverRuns(references[i], variants[i], checkBand) ? 1 : 0;
  return n;
}

bool settlesOnLook(const stats::SpeedupEstimate& e, const Policy& policy) {
  return stats::verdictIsClear(e) && (!policy.settle_only_slower || e.verdict == stats::Verdict::Slower);
}

PairEstimates estimatePairs(const VariantRuns& v, std::optional<double> target, const stats::Sequential& seq) {
  std::vector<double> refTarget, varTarget, refRate, varRate, refWall, varWall;
  std::vector<bool> flipTarget, flipRate, flipWall;  // the host speed check's word per pair
  const double checkBand = records::loadNoise(records::thisMachine()).hostKernelBand();
  PairEstimates e;
  for (size_t i = 0; i < v.pairs.size(); ++i) {
    if (!v.counted(i)) continue;
    const compare::RunMetrics a = compare::computeMetrics(v.references[i], target);
    const compare::RunMetrics b = compare::computeMetrics(v.variants[i], target);
    const bool flipped = compare::hostChangedOverRuns(v.references[i], v.variants[i], checkBand);
    if (target && a.time_to_target_s && b.time_to_target_s) {
      refTarget.push_back(*a.time_to_target_s), varTarget.push_back(*b.time_to_target_s), flipTarget.push_back(flipped);
      e.reached = true;
    }
    // Throughput as time per sample, so that every ratio reads "baseline ÷ variant".
    if (a.train_samples_per_s && b.train_samples_per_s && *a.train_samples_per_s > 0 && *b.train_samples_per_s > 0)
      refRate.push_back(1.0 / *a.train_samples_per_s), varRate.push_back(1.0 / *b.train_samples_per_s), flipRate.push_back(flipped);
    if (a.wall_s && b.wall_s) refWall.push_back(*a.wall_s), varWall.push_back(*b.wall_s), flipWall.push_back(flipped);  // the training loop
  }
  const stats::VerdictRule rule = seq.at(v.countedPairs());
  e.to_target = stats::pairedSpeedup(refTarget, varTarget, rule, flipTarget);
  e.throughput = stats::pairedSpeedup(refRate, varRate, rule, flipRate);
  e.wall = stats::pairedSpeedup(refWall, varWall, rule, flipWall);
  return e;
}

std::optional<compare::FairTarget> referenceFairTarget(const Outcome& o, std::optional<double> user) {
  std::vector<const records::RunRecord*> refs;
  for (const auto& v : o.variants)
    for (const auto& r : v.references)
      if (endedOk(r)) refs.push_back(&r);
  for (const auto& r : o.lone_reference)
    if (endedOk(r)) refs.push_back(&r);
  return compare::fairTargetOf(user, refs);
}

std::optional<double> referenceTarget(const Outcome& o, std::optional<double> user) {
  const auto t = referenceFairTarget(o, user);
  return t ? std::optional<double>(t->acc) : std::nullopt;
}

double hostFloorBand() {
  const records::HostNoise n = records::loadNoise(records::thisMachine());
  return n.measured ? n.band : 0.0;
}

}  // namespace wb::experiment
