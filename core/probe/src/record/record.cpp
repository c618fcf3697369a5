#include "wb/probe/record.h"

#include "wb/common/sysinfo.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "wb/proto/config_json.h"
#include "wb/proto/fields.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/stats/estimate_json.h"

namespace wb::probe {
using nlohmann::json;
using stats::SpeedupEstimate;
using stats::Verdict;

double ProbeResult::dataShare() const {
  if (loader_batches_per_s <= 0 || step_alone_ms <= 0) return 1.0;
  return (1000.0 / loader_batches_per_s) / step_alone_ms;
}

double ProbeResult::maxOtherCores() const {
  double m = alone_other_cores;
  for (const auto& r : rows) m = std::max(m, r.other_cores);
  return m;
}

bool ProbeResult::contended() const { return isContended(maxOtherCores()); }

const ProbeRow* ProbeResult::row(int workers) const {
  for (const auto& r : rows)
    if (r.workers == workers) return &r;
  return nullptr;
}

const ProbeRow* ProbeResult::fastest() const {
  const ProbeRow* best = nullptr;
  for (const auto& r : rows)
    if (!best || r.samples_per_s > best->samples_per_s) best = &r;
  return best;
}

const ProbeRow* ProbeResult::reference() const {
  if (const ProbeRow* zero = row(0)) return zero;
  const ProbeRow* least = nullptr;
  for (const auto& r : rows)
    if (!least || r.workers < least->workers) least = &r;
  return least;
}

stats::RoundsNoise ProbeResult::noise() const {
  std::vector<std::vector<double>> rates;
  for (const auto& r : rows) rates.push_back(r.round_rates);
  return stats::roundsNoise(rates);
}

double ProbeResult::noiseBand() const {
  const double band = noise().band();
  return std::isfinite(band) ? std::max(band, kProbeMinBand) : kProbeMinBand;
}

SpeedupEstimate ProbeResult::speedupOver(const ProbeRow& baseline, const ProbeRow& r) const {
  stats::VerdictRule rule;
  rule.min_effect = noiseBand();  // more workers only for a gain beyond the rounds' own noise
  return stats::roundsRateSpeedup(baseline.round_rates, r.round_rates, noise(), rule);
}

bool ProbeResult::settled() const {
  const ProbeRow* best = fastest();
  if (!best || rounds < 2) return false;
  for (const auto& r : rows)
    if (&r != best && !stats::verdictIsClear(speedupOver(r, *best))) return false;
  return true;
}

int recommendWorkers(const ProbeResult& r) {
  const ProbeRow* best = r.fastest();
  if (!best) return -1;
  int pick = -1;
  for (const auto& row : r.rows) {
    const SpeedupEstimate e = r.speedupOver(row, *best);
    const bool asGood = &row == best ||
                        (e.hasInterval() ? e.verdict != Verdict::Faster
                                         : row.samples_per_s >= best->samples_per_s * (1.0 - kProbeMinBand));
    if (asGood && (pick < 0 || row.workers < pick)) pick = row.workers;
  }
  return pick;
}

namespace {
std::string percent(double share) { return share < 0.001 ? "under 0.1 %" : wb::fmtFixed(share * 100, share < 0.1 ? 1 : 0) + " %"; }
std::string workersWord(int n) { return std::to_string(n) + (n == 1 ? " worker" : " workers"); }

std::string contentionSentence(const ProbeResult& r) {
  if (!r.contended()) return "";
  return "Measured under contention: other processes used up to " + wb::fmtFixed(r.maxOtherCores(), 1) + " of " +
         std::to_string(r.cores) + " cores, so these figures are not this experiment's alone; probe again on a "
         "quiet machine. ";
}

// The recommendation and what it rests on: the rounds' noise and the interval of the choice.
std::string recommendationSentence(const ProbeResult& r) {
  if (r.recommended < 0) return "";
  const std::string rec = "Recommended: " + std::to_string(r.recommended) + " loader worker(s)";
  const ProbeRow* best = r.fastest();
  const ProbeRow* chosen = r.row(r.recommended);
  const ProbeRow* ref = r.reference();
  if (r.rounds < 2 || !best || !chosen || !ref || !r.noise().df)
    return rec + ", the smallest count within " + wb::fmtFixed(kProbeMinBand * 100, 0) + " % of the best samples/s (no interval: fewer than 2 rounds).";
  const std::string rounds = std::to_string(r.rounds) + " interleaved rounds, whose noise is ±" + percent(r.noiseBand());
  std::string out = rec + ", the smallest count the fastest (" + workersWord(best->workers) +
                    ") is not clearly faster than, over " + rounds + ".";
  if (chosen != ref)
    out += " " + workersWord(chosen->workers) + " against " + workersWord(ref->workers) + ": " +
           stats::formatEstimate(r.speedupOver(*ref, *chosen)) + ".";
  if (best != chosen)
    out += " " + workersWord(best->workers) + " against " + workersWord(chosen->workers) + ": " +
           stats::formatEstimate(r.speedupOver(*chosen, *best)) + ".";
  return out;
}

std::string bottleneckSentence(const ProbeResult& r) {
  const double loaderMs = r.loader_batches_per_s > 0 ? 1000.0 / r.loader_batches_per_s : 0;
  if (!r.dataNotBottleneck())
    return " The data path is a bottleneck at 0 workers: the loader alone takes " + wb::fmtFixed(loaderMs, 2) +
           " ms per batch against " + wb::fmtFixed(r.step_alone_ms, 2) + " ms for the step alone.";
  return " The data path is not the bottleneck: the loader alone makes a batch in " + wb::fmtFixed(loaderMs, 2) +
         " ms and the training step alone takes " + wb::fmtFixed(r.step_alone_ms, 2) +
         " ms, so workers can hide at most " + percent(r.dataShare()) + " of a step; more workers cannot help here." +
         (r.recommended > 0 ? " A larger difference between the rows comes from elsewhere (other load, thread "
                              "placement), not from loading."
                            : "");
}
}  // namespace

std::string ProbeResult::verdict() const {
  return contentionSentence(*this) + recommendationSentence(*this) + bottleneckSentence(*this);
}

json probeExperimentFields(const Config& config) {
  const json all = proto::configToJson(config);
  return {{"data", all.at("data")}, {"model", config.model.name}, {"batch_size", config.train.batch_size}};
}

std::string probeKey(const Config& config, const records::MachineId& machine) {
  json identity = records::machineIdentity(machine);
  identity["experiment"] = probeExperimentFields(config);
  return records::storeKey(identity);
}

WB_FIELDS(ProbeRow) {
  f("workers", e.workers), f("steps", e.steps), f("seconds", e.seconds), f("samples_per_s", e.samples_per_s);
  f("data_ms", e.data_ms), f("step_ms", e.step_ms), f("other_cores", e.other_cores), f("rounds", e.round_rates);
}

namespace {

// The candidates, each with its speedup over the reference count (written for readers, never read).
json candidatesJson(const ProbeResult& r) {
  json rows = json::array();
  for (const ProbeRow& row : r.rows) {
    json j = json::object();
    proto::fieldsToJson(row, j);
    if (const ProbeRow* ref = r.reference()) j["vs_reference"] = stats::estimateJson(r.speedupOver(*ref, row));
    rows.push_back(std::move(j));
  }
  return rows;
}

std::vector<ProbeRow> candidatesOf(const json& list) {
  std::vector<ProbeRow> rows;
  if (list.is_array())
    for (const json& c : list)
      if (c.is_object()) proto::fieldsFromJson(c, rows.emplace_back());
  return rows;
}

json noiseJson(const ProbeResult& r) {
  const stats::RoundsNoise noise = r.noise();
  return {{"band", r.noiseBand()}, {"sigma", std::isfinite(noise.sigma) ? json(noise.sigma) : json()}, {"df", noise.df}};
}

}  // namespace

WB_FIELDS(ProbeResult) {
  f("v", proto::derived(2)), f("kind", proto::derived(std::string("probe-workers")));
  f("key", e.key), f("measured_at", e.measured_at);
  f("host", proto::group([&](auto&& g) { g("name", e.host), g("cpu", e.cpu), g("cores", e.cores); }));
  f("device", e.device), f("experiment", e.experiment), f("batch_size", e.batch_size);
  f("loader_alone", proto::group([&](auto&& g) {
      g("workers", proto::derived(0)), g("batches_per_s", e.loader_batches_per_s), g("samples_per_s", e.loader_samples_per_s);
    }));
  f("step_alone", proto::group([&](auto&& g) { g("ms", e.step_alone_ms), g("samples_per_s", e.step_samples_per_s); }));
  f("candidates", proto::via(e.rows, [&e](const std::vector<ProbeRow>&) { return candidatesJson(e); }, candidatesOf));
  f("rounds", e.rounds), f("noise", proto::derived(noiseJson(e))), f("settled", proto::derived(e.settled()));
  f("seconds_per_round", e.seconds_per_round), f("total_s", e.total_s), f("alone_other_cores", e.alone_other_cores);
  f("contended", proto::derived(e.contended())), f("recommended", e.recommended);
  f("data_share", proto::derived(e.dataShare())), f("data_not_bottleneck", proto::derived(e.dataNotBottleneck()));
  f("verdict", proto::derived(e.verdict()));
}

json probeJson(const ProbeResult& r) {
  json out = json::object();
  proto::fieldsToJson(r, out);
  return out;
}

Result<ProbeResult> probeFromJson(const json& doc) {
  if (!doc.is_object() || doc.value("kind", std::string()) != "probe-workers" || !doc.contains("candidates") ||
      !doc["candidates"].is_array())
    return makeError(Errc::InvalidConfig, "not a worker-probe result (kind \"probe-workers\" with candidates)");
  ProbeResult r;
  proto::fieldsFromJson(doc, r);
  // Before the rounds were kept a result stored the time per candidate, over two rounds.
  if (!doc.contains("seconds_per_round") && doc.contains("seconds_per_candidate") && doc["seconds_per_candidate"].is_number())
    r.seconds_per_round = doc["seconds_per_candidate"].get<double>() / 2;
  if (!doc.contains("recommended") || !doc["recommended"].is_number_integer()) r.recommended = recommendWorkers(r);
  return r;
}

Status saveProbe(const ProbeResult& result, const std::filesystem::path& dir) {
  return records::writeStored(dir, result.key + ".json", probeJson(result));
}

namespace {
std::optional<ProbeResult> loadKey(const std::string& key, const std::filesystem::path& dir) {
  const auto doc = records::readCache(dir / (key + ".json"));
  if (!doc) return std::nullopt;
  auto r = probeFromJson(*doc);
  if (!r.ok() || r->key != key) return std::nullopt;
  return std::move(r.value());
}
}  // namespace

std::optional<ProbeResult> loadProbe(const Config& config, const records::MachineId& machine,
                                     const std::filesystem::path& dir) {
  return loadKey(probeKey(config, machine), dir);
}

advice::WorkersAdvice workersAdvice(const ProbeResult* probe, int cores) {
  advice::WorkersAdvice a = advice::ruleOfThumbAdvice(cores);
  if (!probe || probe->recommended < 0) return a;
  a.workers = probe->recommended;
  a.measured = true;
  a.date = probeDate(*probe);
  a.contended = probe->contended();
  a.data_not_bottleneck = probe->dataNotBottleneck();
  return a;
}

void attachProbe(json& caps, const std::optional<ProbeResult>& r) {
  if (r) advice::attachWorkersAdvice(caps, workersAdvice(&*r, r->cores));
}

advice::WorkersAdviceFor storedWorkersAdvice(const std::filesystem::path& dir) {
  auto cache = std::make_shared<std::map<std::string, std::optional<ProbeResult>>>();
  return [cache, dir](const records::RunRecord& run) {
    const auto machine = records::runMachine(run);
    auto config = proto::configFromJson(run.config);
    if (!machine || !config.ok()) return advice::ruleOfThumbFor(run);
    const std::string key = probeKey(config.value(), *machine);
    auto it = cache->find(key);
    if (it == cache->end()) it = cache->emplace(key, loadKey(key, dir)).first;
    return it->second ? workersAdvice(&*it->second, run.cores()) : advice::ruleOfThumbFor(run);
  };
}

std::string probeDate(const ProbeResult& r) { return records::shortUtcDate(r.measured_at); }

}  // namespace wb::probe
