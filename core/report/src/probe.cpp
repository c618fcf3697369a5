#include "wb/report/probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

namespace wb::report {
using nlohmann::json;

int recommendWorkers(const std::vector<ProbeRow>& rows, double tolerance) {
  if (rows.empty()) return -1;
  double best = 0;
  for (const auto& r : rows) best = std::max(best, r.samples_per_s);
  int pick = -1;
  for (const auto& r : rows)
    if (r.samples_per_s >= best * (1.0 - tolerance) && (pick < 0 || r.workers < pick)) pick = r.workers;
  return pick;
}

double ProbeResult::dataShare() const {
  if (loader_batches_per_s <= 0 || step_alone_ms <= 0) return 1.0;
  return (1000.0 / loader_batches_per_s) / step_alone_ms;
}

double ProbeResult::maxOtherCores() const {
  double m = alone_other_cores;
  for (const auto& r : rows) m = std::max(m, r.other_cores);
  return m;
}

bool ProbeResult::contended() const { return maxOtherCores() >= kContendedOtherCores; }

const ProbeRow* ProbeResult::row(int workers) const {
  for (const auto& r : rows)
    if (r.workers == workers) return &r;
  return nullptr;
}

namespace {
std::string percent(double share) { return share < 0.001 ? "under 0.1 %" : fmtFixed(share * 100, share < 0.1 ? 1 : 0) + " %"; }
}  // namespace

std::string ProbeResult::verdict() const {
  std::string out;
  if (contended())
    out = "Measured under contention: other processes used up to " + fmtFixed(maxOtherCores(), 1) + " of " +
          std::to_string(cores) + " cores, so these figures are not this experiment's alone; probe again on a "
          "quiet machine. ";
  if (recommended >= 0)
    out += "Recommended: " + std::to_string(recommended) + " loader worker(s), the smallest count within " +
          fmtFixed(kProbeTolerance * 100, 0) + " % of the best samples/s.";
  const double loaderMs = loader_batches_per_s > 0 ? 1000.0 / loader_batches_per_s : 0;
  if (dataNotBottleneck())
    out += " The data path is not the bottleneck: the loader alone makes a batch in " + fmtFixed(loaderMs, 2) +
           " ms and the training step alone takes " + fmtFixed(step_alone_ms, 2) +
           " ms, so workers can hide at most " + percent(dataShare()) +
           " of a step; more workers cannot help here." +
           (recommended > 0 ? " A larger difference between the rows comes from elsewhere (other load, thread "
                              "placement), not from loading."
                            : "");
  else
    out += " The data path is a bottleneck at 0 workers: the loader alone takes " + fmtFixed(loaderMs, 2) +
           " ms per batch against " + fmtFixed(step_alone_ms, 2) + " ms for the step alone.";
  return out;
}

MachineId thisMachine() { return {hostName(), cpuModel(), logicalCores()}; }

json probeExperimentFields(const Config& config) {
  const json all = proto::configToJson(config);
  return {{"data", all.at("data")}, {"model", config.model.name}, {"batch_size", config.train.batch_size}};
}

std::string probeKey(const Config& config, const MachineId& machine) {
  const json doc = {{"host", machine.host}, {"cpu", machine.cpu}, {"cores", machine.cores},
                    {"experiment", probeExperimentFields(config)}};
  const std::string text = doc.dump();  // object keys sorted: canonical
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::filesystem::path probesDir() {
  if (const char* env = std::getenv("WB_PROBES_DIR"); env && *env) return env;
  return defaultRunsRoot().parent_path() / "probes";
}

json probeJson(const ProbeResult& r) {
  json rows = json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"workers", row.workers}, {"steps", row.steps}, {"seconds", row.seconds},
                    {"samples_per_s", row.samples_per_s}, {"data_ms", row.data_ms}, {"step_ms", row.step_ms},
                    {"other_cores", row.other_cores}});
  return {{"v", 1},
          {"kind", "probe-workers"},
          {"key", r.key},
          {"measured_at", r.measured_at},
          {"host", {{"name", r.host}, {"cpu", r.cpu}, {"cores", r.cores}}},
          {"device", r.device},
          {"experiment", r.experiment},
          {"batch_size", r.batch_size},
          {"loader_alone", {{"workers", 0}, {"batches_per_s", r.loader_batches_per_s},
                            {"samples_per_s", r.loader_samples_per_s}}},
          {"step_alone", {{"ms", r.step_alone_ms}, {"samples_per_s", r.step_samples_per_s}}},
          {"candidates", rows},
          {"seconds_per_candidate", r.seconds_per_candidate},
          {"total_s", r.total_s},
          {"alone_other_cores", r.alone_other_cores},
          {"contended", r.contended()},
          {"recommended", r.recommended},
          {"data_share", r.dataShare()},
          {"data_not_bottleneck", r.dataNotBottleneck()},
          {"verdict", r.verdict()}};
}

Result<ProbeResult> probeFromJson(const json& doc) {
  if (!doc.is_object() || doc.value("kind", std::string()) != "probe-workers" || !doc.contains("candidates") ||
      !doc["candidates"].is_array())
    return makeError(Errc::InvalidConfig, "not a worker-probe result (kind \"probe-workers\" with candidates)");
  try {
    ProbeResult r;
    r.key = doc.value("key", std::string());
    r.measured_at = doc.value("measured_at", std::string());
    const json host = doc.value("host", json::object());
    r.host = host.value("name", std::string());
    r.cpu = host.value("cpu", std::string());
    r.cores = host.value("cores", 0);
    r.device = doc.value("device", std::string());
    r.experiment = doc.value("experiment", json::object());
    r.batch_size = doc.value("batch_size", 0);
    const json la = doc.value("loader_alone", json::object()), sa = doc.value("step_alone", json::object());
    r.loader_batches_per_s = la.value("batches_per_s", 0.0);
    r.loader_samples_per_s = la.value("samples_per_s", 0.0);
    r.step_alone_ms = sa.value("ms", 0.0);
    r.step_samples_per_s = sa.value("samples_per_s", 0.0);
    for (const auto& c : doc["candidates"])
      r.rows.push_back({c.value("workers", 0), c.value("steps", int64_t{0}), c.value("seconds", 0.0),
                        c.value("samples_per_s", 0.0), c.value("data_ms", 0.0), c.value("step_ms", 0.0),
                        c.value("other_cores", 0.0)});
    r.seconds_per_candidate = doc.value("seconds_per_candidate", 0.0);
    r.total_s = doc.value("total_s", 0.0);
    r.alone_other_cores = doc.value("alone_other_cores", 0.0);
    r.recommended = doc.value("recommended", recommendWorkers(r.rows));
    return r;
  } catch (const json::exception& e) {
    return makeError(Errc::InvalidConfig, std::string("worker-probe result: ") + e.what());
  }
}

Status saveProbe(const ProbeResult& result, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return makeError(Errc::Io, dir.string() + ": cannot create the probes folder (" + ec.message() + ")");
  return proto::writeJsonAtomic(dir / (result.key + ".json"), probeJson(result));
}

std::optional<ProbeResult> loadProbe(const Config& config, const MachineId& machine, const std::filesystem::path& dir) {
  const std::string key = probeKey(config, machine);
  const auto path = dir / (key + ".json");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  auto doc = proto::readJsonFile(path);
  if (!doc.ok()) return std::nullopt;
  auto r = probeFromJson(*doc);
  if (!r.ok() || r->key != key) return std::nullopt;
  return std::move(r.value());
}

void attachProbe(json& caps, const std::optional<ProbeResult>& r) {
  if (!r || r->recommended < 0) return;
  if (!caps.is_object()) caps = json::object();
  if (!caps["speedups"].is_object()) caps["speedups"] = json::object();
  if (!caps["speedups"]["workers"].is_object()) caps["speedups"]["workers"] = json::object();
  caps["speedups"]["workers"]["probe"] = {{"recommended", r->recommended}, {"date", probeDate(*r)},
                                          {"measured_at", r->measured_at}, {"key", r->key},
                                          {"data_not_bottleneck", r->dataNotBottleneck()},
                                          {"contended", r->contended()}};
}

int ruleOfThumbWorkers(int cores) { return std::max(1, std::min(cores > 0 ? cores : 1, kRuleOfThumbMaxWorkers)); }

std::string WorkersAdvice::source() const {
  if (!measured) return "the rule of thumb min(cores, " + std::to_string(kRuleOfThumbMaxWorkers) + ")";
  return "the worker probe of " + (date.empty() ? std::string("an earlier date") : date) +
         (contended ? ", measured under contention" : "");
}

WorkersAdvice workersAdvice(const ProbeResult* probe, int cores) {
  WorkersAdvice a;
  a.workers = ruleOfThumbWorkers(cores);
  if (!probe || probe->recommended < 0) return a;
  a.workers = probe->recommended;
  a.measured = true;
  a.date = probeDate(*probe);
  a.contended = probe->contended();
  a.data_not_bottleneck = probe->dataNotBottleneck();
  return a;
}

WorkersAdvice workersAdvice(const json& caps) {
  const auto object = [](const json& j, const char* key) -> const json* {
    auto it = j.is_object() ? j.find(key) : j.end();
    return j.is_object() && it != j.end() && it->is_object() ? &*it : nullptr;
  };
  WorkersAdvice a;
  a.workers = ruleOfThumbWorkers(static_cast<int>(proto::intOr(caps, "cores", 1)));
  const json* sp = object(caps, "speedups");
  const json* w = sp ? object(*sp, "workers") : nullptr;
  const json* probe = w ? object(*w, "probe") : nullptr;
  if (!probe || !probe->contains("recommended") || !(*probe)["recommended"].is_number_integer()) return a;
  const int recommended = (*probe)["recommended"].get<int>();
  if (recommended < 0) return a;
  a.workers = recommended;
  a.measured = true;
  a.date = proto::stringOr(*probe, "date", "");
  a.contended = proto::boolOr(*probe, "contended", false);
  a.data_not_bottleneck = proto::boolOr(*probe, "data_not_bottleneck", false);
  return a;
}

std::optional<MachineId> runMachine(const RunRecord& run) {
  const json& envHost = run.env.is_object() ? proto::objectOr(run.env, "host") : run.env;
  for (const proto::HostInfo& h : {run.start.host, proto::readHostInfo(envHost)}) {
    MachineId m{h.name, h.cpu, h.cores};
    if (!m.host.empty() && m.cores > 0) return m;
  }
  return std::nullopt;
}

namespace {
// The run's experiment and the machine it ran on; nullopt when either is unknown.
std::optional<std::pair<Config, MachineId>> runExperiment(const RunRecord& run) {
  auto machine = runMachine(run);
  if (!machine) return std::nullopt;
  auto config = proto::configFromJson(run.config);
  if (!config.ok()) return std::nullopt;
  return std::make_pair(std::move(config.value()), std::move(*machine));
}
}  // namespace

StoredProbes loadProbesFor(const std::vector<const RunRecord*>& runs, const std::filesystem::path& dir) {
  StoredProbes out;
  for (const RunRecord* run : runs)
    if (auto e = run ? runExperiment(*run) : std::nullopt)
      if (auto p = loadProbe(e->first, e->second, dir)) out.emplace(p->key, std::move(*p));
  return out;
}

const ProbeResult* probeFor(const StoredProbes& probes, const RunRecord& run) {
  if (probes.empty()) return nullptr;
  const auto e = runExperiment(run);
  auto it = e ? probes.find(probeKey(e->first, e->second)) : probes.end();
  return it == probes.end() ? nullptr : &it->second;
}

Table probeTable(const ProbeResult& r) {
  Table t;
  t.title = "Loader workers on this machine (" + std::to_string(r.cores) + " cores, " + r.device + ")";
  t.columns = {{"workers", "Workers", ""},           {"samples_per_s", "Samples/s", "1/s"},
               {"vs_0", "× vs 0 workers", "x"},       {"data_ms", "Data ms/step", "ms"},
               {"step_ms", "Step ms", "ms"},          {"steps", "Steps timed", ""},
               {"other_cores", "Other load", "cores"},
               {"pick", "", ""}};
  const ProbeRow* zero = r.row(0);
  for (const auto& row : r.rows) {
    std::vector<Cell> cells;
    cells.push_back(Cell::num(std::to_string(row.workers), row.workers));
    cells.push_back(Cell::num(fmtFixed(row.samples_per_s, 0), row.samples_per_s));
    if (zero && zero->samples_per_s > 0)
      cells.push_back(Cell::num(fmtSpeedup(row.samples_per_s / zero->samples_per_s), row.samples_per_s / zero->samples_per_s));
    else
      cells.push_back(Cell::str("–"));
    cells.push_back(Cell::num(fmtFixed(row.data_ms, 2), row.data_ms));
    cells.push_back(Cell::num(fmtFixed(row.step_ms, 2), row.step_ms));
    cells.push_back(Cell::num(std::to_string(row.steps), static_cast<double>(row.steps)));
    cells.push_back(Cell::num(fmtFixed(row.other_cores, 1) + (row.other_cores >= kContendedOtherCores ? " (contended)" : ""),
                              row.other_cores));
    cells.push_back(Cell::str(row.workers == r.recommended ? "← recommended" : ""));
    t.rows.push_back(std::move(cells));
  }
  t.notes.push_back("Loader alone (0 workers, no model): " + fmtFixed(r.loader_batches_per_s, 1) + " batches/s, " +
                    fmtFixed(r.loader_samples_per_s, 0) + " samples/s.");
  t.notes.push_back("Training step alone (one cached batch of " + std::to_string(r.batch_size) + ", no loading): " +
                    fmtFixed(r.step_alone_ms, 2) + " ms, " + fmtFixed(r.step_samples_per_s, 0) + " samples/s.");
  t.notes.push_back("Each candidate: the real loader and real training steps for " +
                    fmtFixed(r.seconds_per_candidate, 1) + " s in all, in two interleaved rounds of half that, each "
                    "after a warm-up; data ms/step is the wait for the "
                    "next batch, step ms the rest of the step; other load: cores other processes used meanwhile.");
  t.notes.push_back(r.verdict());
  return t;
}

Drawing probeChart(const ProbeResult& r) {
  // Bars from zero, so a 3 % difference looks like one; the dashed line is 0 workers' rate.
  BarChartSpec spec;
  const std::string model = r.experiment.value("model", std::string());
  spec.title = "Samples/s against loader workers" +
               (model.empty() ? std::string() : " (" + model + ", batch " + std::to_string(r.batch_size) + ", " +
                                                     std::to_string(r.cores) + " cores)");
  spec.y_label = "samples/s (real loader + steps)";
  const ProbeRow* zero = r.row(0);
  spec.reference = zero ? zero->samples_per_s : 0.0;
  std::vector<ProbeRow> rows = r.rows;
  std::sort(rows.begin(), rows.end(), [](const ProbeRow& a, const ProbeRow& b) { return a.workers < b.workers; });
  for (const auto& row : rows) {
    Bar b;
    b.label = std::to_string(row.workers) + (row.workers == 1 ? " worker" : " workers");
    b.value = row.samples_per_s;
    b.annotation = fmtFixed(row.samples_per_s, 0) + "/s";
    if (zero && zero->samples_per_s > 0) b.detail = fmtSpeedup(row.samples_per_s / zero->samples_per_s);
    if (row.workers == r.recommended) b.detail += (b.detail.empty() ? "" : " · ") + std::string("recommended");
    spec.bars.push_back(std::move(b));
  }
  return barChart(spec);
}

std::string probeDate(const ProbeResult& r) {
  int y, mo, d, h, mi;
  if (std::sscanf(r.measured_at.c_str(), "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) != 5) return r.measured_at;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d UTC", y, mo, d, h, mi);
  return buf;
}

std::string utcNowIso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace wb::report
