#pragma once
// Worker-probe results as a stored probe holds them, for tests of the probe's rules and of what
// reads a stored probe (the ladder's workers step). Header-only.
#include <initializer_list>
#include <utility>
#include <vector>

#include "wb/report/probe.h"

namespace wb::test {

// Rows from (workers, samples/s) pairs, in the order given.
inline std::vector<report::ProbeRow> rowsOf(std::initializer_list<std::pair<int, double>> pairs) {
  std::vector<report::ProbeRow> rows;
  for (const auto& [w, sps] : pairs) rows.push_back({w, 100, 1.0, sps, 1.0, 2.0});
  return rows;
}

// A probe of config `c` on machine `m` measured on 2026-12-01 08:40 UTC with these rows.
inline report::ProbeResult resultFor(const Config& c, const report::MachineId& m, std::vector<report::ProbeRow> rows) {
  report::ProbeResult r;
  r.key = report::probeKey(c, m);
  r.measured_at = "2026-12-01T08:40:12Z";
  r.host = m.host;
  r.cpu = m.cpu;
  r.cores = m.cores;
  r.device = "cpu";
  r.experiment = report::probeExperimentFields(c);
  r.batch_size = c.train.batch_size;
  r.loader_batches_per_s = 1000;  // 1 ms a batch
  r.step_alone_ms = 20;
  r.rows = std::move(rows);
  r.recommended = report::recommendWorkers(r.rows);
  r.seconds_per_candidate = 3;
  return r;
}

}  // namespace wb::test
