#pragma once
// Shared by the benchmarks that measure real runs: each configuration is a `workbench-cli run`
// (launcher + worker processes, so a fresh process and its own peak memory), read back from its
// run directory with wb_report, as the window and `compare` read it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

namespace wbbench {

namespace fs = std::filesystem;
using nlohmann::json;
using wb::render::Cell;

struct Measured {
  bool ok = false;
  std::string status, error;
  double train_sps = 0;            // training samples/s (warm-up interval excluded)
  double epoch_s = 0;              // mean training time per epoch (evaluation excluded)
  double wall_s = 0;
  int epochs = 0;
  double train_peak = 0;           // host/device peak during training (bytes)
  double eval_ms = 0;              // mean evaluation time
  double eval_peak = 0;            // peak during evaluation (bytes)
  double best_acc = 0;
  std::optional<wb::records::StepTimes> split;
  // Several ranks (from every rank's events): mean step time, comm ms per step, the share of
  // gradient buckets launched during backward, and the largest per-rank optimiser state.
  int world = 1;
  double step_ms = 0;
  double comm_ms = 0;
  double overlap = 0;
  double opt_bytes = 0;                 // the largest rank's optimiser state
  std::vector<double> opt_bytes_by_rank;  // each rank's, from its last step event
};

inline Measured runOnce(const fs::path& root, const std::string& cli, const std::string& tag,
                        const std::vector<std::string>& sets) {
  Measured m;
  const wb::Config defaults;  // named: a Config{} temporary trips GCC 12's -Wmaybe-uninitialized
  json doc = wb::proto::configToJson(defaults);
  doc["name"] = tag;
  for (const auto& s : sets) {
    if (auto st = wb::proto::applyOverride(doc, s); !st.ok()) {
      m.error = st.error().message;
      return m;
    }
  }
  auto cfg = wb::proto::configFromJson(doc);
  if (!cfg.ok()) {
    m.error = cfg.error().message;
    return m;
  }
  wb::launch::LaunchOptions lo;
  lo.cli_path = cli;
  lo.run_dir = (root / "runs" / tag).string();
  std::error_code ec;
  fs::remove_all(lo.run_dir, ec);
  auto out = wb::launch::launchRun(cfg.value(), lo);
  if (!out.ok()) {
    m.error = out.error().message;
    return m;
  }
  m.status = out->status;
  auto rec = wb::records::loadRun(out->run_dir);
  if (!rec.ok()) {
    m.error = rec.error().message;
    return m;
  }
  auto metrics = wb::compare::computeMetrics(rec.value(), std::nullopt);
  m.ok = out->status == "ok" || out->status == "early-stopped";
  if (!m.ok) m.error = out->summary.message.value_or(out->status);
  m.train_sps = metrics.train_samples_per_s.value_or(0);
  m.wall_s = metrics.wall_s.value_or(0);
  m.epochs = metrics.epochs;
  m.best_acc = metrics.best_val_acc.value_or(0);
  m.eval_ms = metrics.eval_ms.value_or(0);
  m.split = metrics.step_ms;
  // Train time per epoch and the train / eval peaks from rank 0's own events: the trainer resets
  // the peak at each epoch's start and again at each evaluation's, so the two phases separate.
  auto events = wb::proto::readEventsFile((fs::path(out->run_dir) / "events.jsonl").string());
  double trainSum = 0;
  int trainN = 0;
  std::vector<double> stepMs, commMs, overlap;
  for (const auto& ev : events) {
    const std::string type = ev.value("type", "");
    if (type == "start") m.world = std::max(m.world, ev.value("world_size", 1));
    // Optimiser state exists after the first step (Adam's is lazy): each rank's last step event.
    if (type == "step" && ev.contains("comm") && ev["comm"].contains("optimizer_state_bytes")) {
      const auto r = static_cast<size_t>(ev.value("rank", 0));
      if (m.opt_bytes_by_rank.size() <= r) m.opt_bytes_by_rank.resize(r + 1, 0.0);
      m.opt_bytes_by_rank[r] = ev["comm"].value("optimizer_state_bytes", 0.0);
    }
    if (ev.value("rank", 0) != 0) continue;
    if (type == "step" && ev.contains("step_ms")) {
      stepMs.push_back(ev.value("step_ms", 0.0));
      if (ev.contains("ms")) commMs.push_back(ev["ms"].value("comm", 0.0));
      if (ev.contains("comm")) overlap.push_back(ev["comm"].value("overlap", 0.0));
    }
    if (type == "epoch") {
      trainSum += ev.value("train_seconds", 0.0);
      ++trainN;
    } else if (type == "step" && ev.contains("mem")) {
      m.train_peak = std::max(m.train_peak, ev["mem"].value("peak", 0.0));
    } else if (type == "eval" && ev.contains("mem")) {
      m.eval_peak = std::max(m.eval_peak, ev["mem"].value("peak", 0.0));
    }
  }
  m.epoch_s = trainN > 0 ? trainSum / trainN : 0;
  // The first log interval holds the warm-up; leave it out when there are others.
  auto meanAfterFirst = [](std::vector<double> v) {
    if (v.size() > 1) v.erase(v.begin());
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  for (double b : m.opt_bytes_by_rank) m.opt_bytes = std::max(m.opt_bytes, b);
  m.step_ms = meanAfterFirst(stepMs);
  m.comm_ms = meanAfterFirst(commMs);
  m.overlap = meanAfterFirst(overlap);
  return m;
}

// Median over repeats of each number (the runs alternate baseline/toggle so drift hits both).
inline Measured medianOf(const std::vector<Measured>& ms) {
  Measured out = ms.front();
  auto med = [&](auto get) {
    std::vector<double> v;
    for (const auto& m : ms)
      if (m.ok) v.push_back(get(m));
    return v.empty() ? 0.0 : wb::stats::median(v);
  };
  out.ok = std::any_of(ms.begin(), ms.end(), [](const Measured& m) { return m.ok; });
  out.train_sps = med([](const Measured& m) { return m.train_sps; });
  out.epoch_s = med([](const Measured& m) { return m.epoch_s; });
  out.wall_s = med([](const Measured& m) { return m.wall_s; });
  out.train_peak = med([](const Measured& m) { return m.train_peak; });
  out.eval_ms = med([](const Measured& m) { return m.eval_ms; });
  out.eval_peak = med([](const Measured& m) { return m.eval_peak; });
  out.best_acc = med([](const Measured& m) { return m.best_acc; });
  out.step_ms = med([](const Measured& m) { return m.step_ms; });
  out.comm_ms = med([](const Measured& m) { return m.comm_ms; });
  out.overlap = med([](const Measured& m) { return m.overlap; });
  out.opt_bytes = med([](const Measured& m) { return m.opt_bytes; });
  for (const auto& m : ms)
    if (m.ok) out.opt_bytes_by_rank = m.opt_bytes_by_rank;  // deterministic: the same each repeat
  return out;
}

inline std::string splitText(const std::optional<wb::records::StepTimes>& s) {
  if (!s) return "-";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.1f/%.1f/%.1f/%.1f/%.1f", s->data, s->h2d, s->fwd, s->bwd, s->opt);
  return buf;
}

inline Cell ratioCell(double base, double run, bool higherIsBetter) {
  if (base <= 0 || run <= 0) return Cell::str("-");
  const double x = higherIsBetter ? run / base : base / run;
  return Cell::num(wb::fmtSpeedup(x), x);
}

// Prints the table, then removes the runs' folder unless --keep named it. Returns main's 0.
inline int printAndClean(const wb::render::Table& table, const fs::path& root, bool kept) {
  std::printf("\n%s\n", wb::render::renderText(table).c_str());
  if (kept) {
    std::printf("runs kept in %s\n", root.c_str());
  } else {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  return 0;
}

}  // namespace wbbench
