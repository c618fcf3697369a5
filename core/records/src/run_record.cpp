#include "wb/records/run_record.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "wb/proto/event_types.h"
#include "wb/proto/flops_record.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/schema.h"

namespace wb::records {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// config.json and env.json are free-form: proto's tolerant readers, with this file's defaults.
int64_t integer(const json& j, const char* key, int64_t fallback = 0) { return proto::intOr(j, key, fallback); }
std::string text(const json& j, const char* key, const std::string& fallback = {}) {
  return proto::stringOr(j, key, fallback);
}

void notePeak(std::map<int, int64_t>& peaks, int rank, int64_t bytes) {
  if (bytes <= 0) return;
  int64_t& p = peaks[rank];
  p = std::max(p, bytes);
}

void readMemory(RunRecord& r, int rank, const std::optional<proto::MemoryPart>& mem) {
  if (!mem) return;
  if (mem->device.rfind("cuda", 0) == 0) notePeak(r.device_peak, rank, mem->peak.value_or(0));
  int64_t rss = mem->rss_peak.value_or(0);
  if (rss <= 0) rss = mem->rss.value_or(0);
  notePeak(r.rss_peak, rank, rss);
}

double bytesOrNaN(const std::optional<int64_t>& v) { return v ? static_cast<double>(*v) : kNaN; }

std::optional<StepMemory> stepMemory(const std::optional<proto::MemoryPart>& mem) {
  if (!mem) return std::nullopt;
  return StepMemory{mem->device, bytesOrNaN(mem->alloc), bytesOrNaN(mem->reserved), bytesOrNaN(mem->peak),
                    bytesOrNaN(mem->rss)};
}

std::optional<StepCpu> stepCpu(const std::optional<proto::CpuPart>& cpu) {
  if (!cpu || !std::isfinite(cpu->process_cores) || !std::isfinite(cpu->machine_busy_cores)) return std::nullopt;
  return StepCpu{cpu->process_cores, cpu->machine_busy_cores, cpu->cores};
}

// What a reader of this schema skips in `events`, in words (one line, or "" when nothing): event
// types it has no list for, fields its lists do not name, records of a newer schema version.
std::string skippedInEvents(const std::vector<json>& events) {
  std::map<std::string, int64_t> types;
  std::set<std::string> fields;
  int64_t newer = 0;
  int newest = proto::kEventVersion;
  for (const json& ev : events) {
    const proto::Envelope env = proto::readEnvelope(ev);
    if (env.v > proto::kEventVersion) ++newer, newest = std::max(newest, env.v);
    if (!proto::knownEventType(env.type)) ++types[env.type];
    for (const auto& key : proto::unknownEventFields(ev)) fields.insert(env.type + "." + key);
  }
  std::vector<std::string> parts;
  for (const auto& [type, n] : types) parts.push_back(std::to_string(n) + " event(s) of type '" + type + "'");
  if (!fields.empty()) {
    std::string list;
    for (const auto& f : fields) list += (list.empty() ? "" : ", ") + f;
    parts.push_back("fields " + list);
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  if (newer > 0)
    out += std::string(out.empty() ? "" : "; ") + std::to_string(newer) + " record(s) of schema version " +
           std::to_string(newest) + ", newer than this reader's " + std::to_string(proto::kEventVersion) +
           " (read with the fields it knows)";
  return out;
}

// summary.json's fields (and summary.cpu's) that this reader does not know.
std::string skippedInSummary(const proto::RunSummary& s) {
  std::string list;
  auto add = [&list](const json& unknown, const std::string& prefix) {
    if (!unknown.is_object()) return;
    for (auto it = unknown.begin(); it != unknown.end(); ++it) list += (list.empty() ? "" : ", ") + prefix + it.key();
  };
  add(s.unknown, "");
  if (s.cpu) add(s.cpu->unknown, "cpu.");
  return list;
}

}  // namespace

StepSample decodeStep(const json& ev) {
  const proto::StepEvent e = proto::readStepEvent(ev);
  StepSample s;
  s.epoch = e.epoch;
  s.step = e.step;
  s.samples = e.samples;
  s.t = proto::readEnvelope(ev).t;
  s.loss = e.loss;
  s.lr = e.lr;
  s.samples_per_s = e.samples_per_s;
  if (e.ms) s.ms = StepTimes{e.ms->data, e.ms->h2d, e.ms->fwd, e.ms->bwd, e.ms->opt, e.ms->comm, e.ms->other.value_or(0)};
  s.cpu = stepCpu(e.cpu);
  if (e.amp) {
    if (std::isfinite(e.amp->scale)) s.amp_scale = e.amp->scale;
    s.amp_skipped = e.amp->skipped;
  }
  s.mem = stepMemory(e.mem);
  if (e.flops && e.flops->per_step > 0) {
    s.gflop_per_s = e.flops->achieved_gflop_per_s;
    s.pct_of_peak = e.flops->pctOfPeak();
    s.pct_of_datasheet = e.flops->pctOfDatasheet();
  }
  return s;
}

namespace {

void readEnd(RunRecord& r, const json& ev) {
  const proto::EndEvent end = proto::readEndEvent(ev);
  if (!r.finished) r.summary = end.summary;  // the first end's (summary.json, when read, wins)
  r.finished = true;
  r.status = end.status;
}

void readRank0(RunRecord& r, const proto::Envelope& env, const json& ev) {
  const std::string& type = env.type;
  if (type == proto::RunEvent::kType) {
    const proto::RunEvent run = proto::readRunEvent(ev);
    if (r.id.empty()) r.id = run.run_id;
    if (run.world_size > 0) r.world_size = run.world_size;
    if (run.config.is_object() && r.config.empty()) r.config = run.config;
  } else if (type == proto::StartEvent::kType) {
    r.start = proto::readStartEvent(ev);
    if (!r.start.device.empty()) r.device = r.start.device;
    if (r.start.world_size > 0) r.world_size = r.start.world_size;
    if (r.start.config.is_object() && r.config.empty()) r.config = r.start.config;
  } else if (type == proto::StepEvent::kType) {
    r.steps.push_back(decodeStep(ev));
  } else if (type == proto::EvalEvent::kType) {
    const proto::EvalEvent v = proto::readEvalEvent(ev);
    EvalSample e;
    e.epoch = v.epoch;
    e.step = v.step;
    e.t = env.t;
    e.val_loss = v.val_loss;
    e.val_acc = std::isfinite(v.val_acc) ? v.val_acc : 0.0;
    e.eval_ms = v.eval_ms;
    e.eval_samples = v.eval_samples;
    e.samples = v.samples;
    r.evals.push_back(e);
  } else if (type == proto::EpochEvent::kType) {
    const proto::EpochEvent p = proto::readEpochEvent(ev);
    EpochSample e;
    e.epoch = p.epoch;
    e.t = env.t;
    e.seconds = p.seconds;
    e.samples_per_s = p.samples_per_s;
    e.train_samples_per_s = p.train_samples_per_s;
    e.train_loss = p.train_loss;
    r.epochs.push_back(e);
  } else if (type == proto::EarlyStopEvent::kType) {
    r.early_stop = proto::readEarlyStopEvent(ev);
  }
}

}  // namespace

std::optional<StepCpu> decodeStepCpu(const json& ev) { return stepCpu(proto::readStepEvent(ev).cpu); }

std::optional<CpuUse> cpuUse(const proto::RunSummary& summary) {
  if (!summary.cpu) return std::nullopt;
  const proto::RunCpu& j = *summary.cpu;
  CpuUse c;
  c.cores = j.cores;
  if (j.asked_cores) c.asked_cores = *j.asked_cores;
  c.used_cores = proto::finite(j.used_cores);
  c.other_load_cores = proto::finite(j.other_load_cores);
  // A writer that left the verdict out still gave the load it is made of.
  c.contended = j.contended ? *j.contended : c.other_load_cores && isContended(*c.other_load_cores);
  c.shared_cores = proto::finite(j.shared_cores);
  c.shared = j.shared ? *j.shared : c.shared_cores && isContended(*c.shared_cores);
  c.note = j.note.value_or("");
  c.busiest_others = j.busiest_others.value_or(std::vector<ProcessLoad>{});
  return c;
}

const json& RunRecord::configAt(const std::string& dotted) const {
  static const json kNull;
  const json* cur = &config;
  size_t pos = 0;
  while (pos <= dotted.size()) {
    size_t dot = dotted.find('.', pos);
    std::string key = dotted.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return *cur;
}

int RunRecord::cores() const {
  if (start.host.cores > 0) return start.host.cores;
  if (const int c = proto::readHostInfo(proto::objectOr(env, "host")).cores; c > 0) return c;
  for (const json* j : {&proto::objectOr(env, "cpu"), &env}) {  // other shapes of env.json
    const int64_t c = integer(*j, "cores");
    if (c > 0) return static_cast<int>(c);
  }
  return 0;
}

void addEvent(RunRecord& r, const json& ev) {
  if (!ev.is_object()) return;
  const proto::Envelope env = proto::readEnvelope(ev);
  const std::string& type = env.type;
  const int rank = env.rank.value_or(0);
  if (type == proto::WarningEvent::kType) {
    const std::string msg = proto::readWarningEvent(ev).message;
    r.warnings.push_back(msg.empty() ? "(no message)" : msg);
  }
  if (type == proto::ErrorEvent::kType) {
    std::string msg = proto::readErrorEvent(ev).message;
    if (msg.empty()) msg = "(no message)";
    if (env.rank) msg = "rank " + std::to_string(rank) + ": " + msg;
    r.errors.push_back(msg);
  }
  if (type == proto::EndEvent::kType) readEnd(r, ev);
  const bool launcherLine = type == proto::RunEvent::kType;  // rank -1
  if (launcherLine) readRank0(r, env, ev);
  if (type == proto::StepEvent::kType) readMemory(r, rank, proto::readStepEvent(ev).mem);
  if (type == proto::EvalEvent::kType) readMemory(r, rank, proto::readEvalEvent(ev).mem);
  if (rank != 0 || launcherLine) return;
  r.last_t = std::max(r.last_t, env.t);
  readRank0(r, env, ev);
}

void finishRecord(RunRecord& r) {
  auto byTime = [](const auto& a, const auto& b) { return a.t < b.t; };
  auto order = [&](auto& v) {
    if (!std::is_sorted(v.begin(), v.end(), byTime)) std::stable_sort(v.begin(), v.end(), byTime);
  };
  order(r.steps);
  order(r.evals);
  order(r.epochs);
  r.name = text(r.config, "name");
}

RunRecord recordFromEvents(const std::vector<json>& events) {
  RunRecord r;
  for (const json& ev : events) addEvent(r, ev);
  finishRecord(r);
  return r;
}

Result<RunRecord> loadRun(const fs::path& dirIn) {
  std::error_code ec;
  fs::path dir = fs::absolute(dirIn, ec);
  if (ec) dir = dirIn;
  if (!fs::is_directory(dir, ec))
    return makeError(Errc::Io, dir.string() + ": no such run folder (pass a folder that holds config.json and events.jsonl)");
  const proto::RunDir rd{dir};
  if (!rd.looksLikeRun())
    return makeError(Errc::Io, dir.string() + ": not a run folder (it has neither config.json nor events.jsonl)");

  RunRecord r;
  std::vector<std::string> problems;
  if (fs::exists(rd.events(), ec)) {
    int64_t malformed = 0;
    std::string skippedNote;
    const std::vector<json> events = proto::readEventsFile(rd.events().string(), &malformed, &skippedNote);
    r = recordFromEvents(events);
    r.malformed_lines = malformed;
    if (malformed > 0) problems.push_back(rd.events().string() + ": " + skippedNote);
    if (const std::string skipped = skippedInEvents(events); !skipped.empty())
      problems.push_back(rd.events().string() + ": skipped what this reader does not know: " + skipped);
  } else {
    problems.push_back(rd.events().string() + ": missing (the run has not started yet)");
  }
  r.dir = dir.string();
  r.id = rd.id();
  auto loadOptional = [&](const fs::path& p, json& into) {
    if (!fs::exists(p, ec)) return false;
    auto j = proto::readJsonFile(p);
    if (!j.ok() || !j->is_object()) {
      problems.push_back(j.ok() ? p.string() + " is not a JSON object" : j.error().message);
      return false;
    }
    into = std::move(j.value());
    return true;
  };
  json config;
  if (loadOptional(rd.config(), config)) r.config = std::move(config);
  loadOptional(rd.env(), r.env);
  json summary;
  if (loadOptional(rd.summary(), summary)) {
    r.summary = proto::readRunSummary(summary);
    if (const std::string skipped = skippedInSummary(r.summary); !skipped.empty())
      problems.push_back(rd.summary().string() + ": skipped fields this reader does not know: " + skipped);
    r.finished = true;
    r.status = r.summary.status.value_or(r.status);
  }
  r.name = text(r.config, "name", r.name);
  r.problems = std::move(problems);
  return r;
}

Result<std::vector<RunRecord>> loadRuns(const std::vector<std::string>& dirs) {
  std::vector<RunRecord> out;
  for (const auto& d : dirs) {
    auto r = loadRun(d);
    if (!r.ok()) return r.error();
    out.push_back(std::move(r.value()));
  }
  return out;
}

std::string runLabel(const RunRecord& run) {
  if (!run.id.empty()) return run.id;
  if (!run.name.empty()) return run.name;
  return "(unnamed run)";
}

}  // namespace wb::records
