#include "wb/probe/workers.h"

#include "bench.h"

#include <algorithm>
#include <optional>

#include <torch/torch.h>

#include "wb/common/clock.h"
#include "wb/common/sysinfo.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"
#include "wb/data/loader_config.h"
#include "wb/train/host_use.h"

namespace wb::probe {

std::vector<int> defaultCandidates(int cores) {
  std::vector<int> c = {0, 1, 2, 4};
  if (cores > 4) c.push_back(std::min(cores, 8));
  return c;
}

namespace {

// (a) batches from a 0-worker loader for `seconds`, after one warm-up batch.
void loaderAlone(Bench& b, double seconds, ProbeResult& r) {
  data::Loader loader(b.train, data::trainLoaderOptions(b.c, b.mode.pin, 0));
  int epoch = 0;
  loader.startEpoch(epoch);
  b.nextBatch(loader, epoch);
  int64_t batches = 0, samples = 0;
  const CpuTimes cpu = readCpuTimes();
  Stopwatch clock;
  while ((clock.seconds() < seconds || batches < 1) && !b.stopped()) {
    samples += b.nextBatch(loader, epoch).x.size(0);
    ++batches;
  }
  const double s = clock.seconds();
  r.alone_other_cores = std::max(r.alone_other_cores, otherCoresSince(cpu));
  r.loader_batches_per_s = batches / s;
  r.loader_samples_per_s = samples / s;
}

// (b) steps on one cached batch for `seconds`, after one warm-up step.
void stepAlone(Bench& b, double seconds, ProbeResult& r) {
  data::Loader loader(b.train, data::trainLoaderOptions(b.c, b.mode.pin, 0));
  int epoch = 0;
  loader.startEpoch(epoch);
  const data::Batch batch = b.nextBatch(loader, epoch);
  b.step(batch.x, batch.y);
  b.sync();
  int64_t steps = 0;
  const CpuTimes cpu = readCpuTimes();
  Stopwatch clock;
  while ((clock.seconds() < seconds || steps < 1) && !b.stopped()) {
    b.step(batch.x, batch.y);
    ++steps;
    if (steps % 8 == 0) b.sync();
  }
  b.sync();
  const double s = clock.seconds();
  r.alone_other_cores = std::max(r.alone_other_cores, otherCoresSince(cpu));
  r.step_alone_ms = s * 1000.0 / steps;
  r.step_samples_per_s = steps * batch.x.size(0) / s;
}

// (c) a fresh loader with `workers` feeding real steps: a warm-up (a tenth of the time, at least
// one step) while the workers fill their queue, then `seconds` timed (at least one step).
ProbeRow candidate(Bench& b, int workers, double seconds) {
  data::Loader loader(b.train, data::trainLoaderOptions(b.c, b.mode.pin, workers));
  int epoch = 0;
  loader.startEpoch(epoch);
  Stopwatch warm;
  for (int i = 0; (i < 1 || warm.seconds() < seconds / 10) && !b.stopped(); ++i) {
    data::Batch batch = b.nextBatch(loader, epoch);
    b.step(batch.x, batch.y);
  }
  b.sync();
  ProbeRow row;
  row.workers = workers;
  double dataMs = 0;
  int64_t samples = 0;
  const CpuTimes cpu = readCpuTimes();
  Stopwatch clock;
  while ((clock.seconds() < seconds || row.steps < 1) && !b.stopped()) {
    const double t0 = clock.ms();
    data::Batch batch = b.nextBatch(loader, epoch);
    dataMs += clock.ms() - t0;
    b.step(batch.x, batch.y);
    samples += batch.x.size(0);
    ++row.steps;
  }
  b.sync();
  row.seconds = clock.seconds();
  row.other_cores = otherCoresSince(cpu);
  loader.stop();
  row.samples_per_s = samples / row.seconds;
  row.data_ms = dataMs / row.steps;
  row.step_ms = (row.seconds * 1000.0 - dataMs) / row.steps;
  return row;
}

// Two stretches of one candidate as one row: their steps, time and waits added up.
void merge(ProbeRow& into, const ProbeRow& more) {
  const int64_t steps = into.steps + more.steps;
  const double seconds = into.seconds + more.seconds;
  into.samples_per_s = (into.samples_per_s * into.seconds + more.samples_per_s * more.seconds) / seconds;
  into.data_ms = (into.data_ms * into.steps + more.data_ms * more.steps) / steps;
  into.step_ms = (into.step_ms * into.steps + more.step_ms * more.steps) / steps;
  into.other_cores = (into.other_cores * into.seconds + more.other_cores * more.seconds) / seconds;
  into.steps = steps;
  into.seconds = seconds;
  into.round_rates.push_back(more.samples_per_s);
}

// Rounds of every candidate in turn (0 1 2 4, 0 1 2 4, …), so a change in the machine's speed
// falls on every count: at least min_rounds, then one more while the choice is not settled.
void interleavedRounds(Bench& b, const WorkersProbeOptions& o, const std::vector<int>& candidates, ProbeResult& r) {
  const int minRounds = std::max(1, o.min_rounds), maxRounds = std::max(minRounds, o.max_rounds);
  for (int round = 0; round < maxRounds && !b.stopped(); ++round) {
    if (round >= minRounds && r.settled()) break;
    for (size_t i = 0; i < candidates.size() && !b.stopped(); ++i) {
      b.say("workers " + std::to_string(candidates[i]) + " (round " + std::to_string(round + 1) + ", at most " +
            std::to_string(maxRounds) + ")…");
      const ProbeRow row = candidate(b, candidates[i], o.seconds / 2);
      if (round == 0) {
        r.rows.push_back(row);
        r.rows.back().round_rates = {row.samples_per_s};
      } else {
        merge(r.rows[i], row);
      }
    }
    if (!b.stopped()) r.rounds = round + 1;
  }
}

}  // namespace

Result<ProbeResult> probeWorkers(const WorkersProbeOptions& o) {
  Stopwatch total;
  Bench b{o.config, o.stop, o.progress};
  if (auto st = b.open(); !st.ok()) return st.error();
  const records::MachineId machine = records::thisMachine();
  ProbeResult r;
  r.key = probeKey(o.config, machine);
  r.measured_at = wb::utcNowIso();
  r.host = machine.host;
  r.cpu = machine.cpu;
  r.cores = machine.cores;
  r.device = b.device.str();
  r.experiment = probeExperimentFields(o.config);
  r.experiment["precision"] = o.config.speedups.precision;
  r.experiment["threads"] = at::get_num_threads();
  r.batch_size = o.config.train.batch_size;
  r.seconds_per_round = o.seconds / 2;
  const std::vector<int> candidates = o.candidates.empty() ? defaultCandidates(machine.cores) : o.candidates;
  try {
    b.say("loader alone (0 workers, no model)…");
    loaderAlone(b, o.seconds / 2, r);
    b.say("training step alone (one cached batch)…");
    stepAlone(b, o.seconds / 2, r);
    interleavedRounds(b, o, candidates, r);
  } catch (const data::DataError& e) {
    return makeError(Errc::Data, e.what());
  }
  if (b.stopped()) return makeError(Errc::Cancelled, "probe cancelled; nothing was stored");
  r.recommended = recommendWorkers(r);
  r.total_s = total.seconds();
  return r;
}

}  // namespace wb::probe
