// A cheap trial: one short whole run of a candidate, and what it says about an epoch's time.
#include <algorithm>
#include <cmath>

#include "wb/compare/compare.h"
#include "wb/records/run_record.h"
#include "wb/tune/tune.h"

namespace wb::tune {

Config trialConfig(const Config& c, int64_t samples, int64_t val_limit) {
  Config t = c;
  const int64_t global = static_cast<int64_t>(t.train.batch_size) * std::max(1, t.speedups.devices);
  const int64_t steps = std::max<int64_t>(12, (samples + global - 1) / global);
  t.train.epochs = 1;
  t.train.max_steps = steps;
  t.train.log_every = static_cast<int>(std::max<int64_t>(1, steps / 6));  // a steady rate after the first interval
  if (val_limit > 0 && (t.data.limit_val == 0 || t.data.limit_val > val_limit)) t.data.limit_val = val_limit;
  t.speedups.early_stopping.patience = 0;
  return t;
}

std::optional<double> epochEstimate(const proto::TuneTrial& t, int64_t train_images, int64_t val_images) {
  if (!t.train_samples_per_s || *t.train_samples_per_s <= 0 || train_images <= 0) return std::nullopt;
  double s = static_cast<double>(train_images) / *t.train_samples_per_s;
  if (val_images > 0 && t.eval_images_per_s && *t.eval_images_per_s > 0) s += static_cast<double>(val_images) / *t.eval_images_per_s;
  return s;
}

// The trial's figures from its run folder: steady training samples/s, evaluation images/s (its
// last evaluation), peak memory, what it cost, whether the machine was busy with other work (its
// status is the launcher's, set by the caller).
void readTrialFigures(const records::RunRecord& r, proto::TuneTrial& t) {
  const compare::RunMetrics m = compare::computeMetrics(r, std::nullopt);
  t.train_samples_per_s = m.train_samples_per_s;
  for (auto it = r.evals.rbegin(); it != r.evals.rend(); ++it)
    if (it->eval_ms > 0 && it->eval_samples > 0) {
      t.eval_images_per_s = static_cast<double>(it->eval_samples) / (it->eval_ms / 1000.0);
      break;
    }
  if (m.peak_mem_bytes) t.peak_mem = static_cast<int64_t>(*m.peak_mem_bytes);
  t.run_wall_s = m.run_wall_s ? m.run_wall_s : m.wall_s;
  t.contended = m.contention.contended;
}

}  // namespace wb::tune
