#pragma once
// Worker-probe results as a stored probe holds them, for tests of the probe's rules and of what
// reads a stored probe (the ladder's workers step, the advisor, the window). Header-only.
#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

#include "wb/probe/record.h"

namespace wb::test {

// Rows from (workers, samples/s) pairs, in the order given, as a probe stored before rounds were
// kept holds them (no per-round rates: no interval).
inline std::vector<probe::ProbeRow> rowsOf(std::initializer_list<std::pair<int, double>> pairs) {
  std::vector<probe::ProbeRow> rows;
  for (const auto& [w, sps] : pairs) rows.push_back({w, 100, 1.0, sps, 1.0, 2.0, 0.0, {}});
  return rows;
}

// Rows from (workers, samples/s of each round) pairs: each row's rate is its rounds' mean.
inline std::vector<probe::ProbeRow> roundsOf(std::initializer_list<std::pair<int, std::vector<double>>> pairs) {
  std::vector<probe::ProbeRow> rows;
  for (const auto& [w, rates] : pairs) {
    double sum = 0;
    for (double x : rates) sum += x;
    rows.push_back({w, 100, 1.0, rates.empty() ? 0.0 : sum / double(rates.size()), 1.0, 2.0, 0.0, rates});
  }
  return rows;
}

// A probe of config `c` on machine `m` measured on 2026-12-01 08:40 UTC with these rows.
inline probe::ProbeResult resultFor(const Config& c, const records::MachineId& m, std::vector<probe::ProbeRow> rows) {
  probe::ProbeResult r;
  r.key = probe::probeKey(c, m);
  r.measured_at = "2026-12-01T08:40:12Z";
  r.host = m.host;
  r.cpu = m.cpu;
  r.cores = m.cores;
  r.device = "cpu";
  r.experiment = probe::probeExperimentFields(c);
  r.batch_size = c.train.batch_size;
  r.loader_batches_per_s = 1000;  // 1 ms a batch
  r.step_alone_ms = 20;
  r.rows = std::move(rows);
  for (const auto& row : r.rows) r.rounds = std::max(r.rounds, static_cast<int>(row.round_rates.size()));
  r.recommended = probe::recommendWorkers(r);
  r.seconds_per_round = 1.5;
  return r;
}

}  // namespace wb::test
