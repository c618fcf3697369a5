// The baseline's reference runs: the store's folder per experiment, running what is missing.
#include "wb/experiment/reference_runs.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>

#include "wb/common/fs.h"
#include "wb/common/paths.h"
#include "wb/common/speedups.h"
#include "wb/common/sysinfo.h"
#include "wb/experiment/paired_runner.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_status.h"
#include "wb/compare/compare.h"
#include "wb/records/host.h"
#include "wb/proto/record_files.h"
#include "wb/proto/reference_record.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What decides the samples to target: the config without what only changes how fast the steps go.
json experimentIdentity(const Config& baseline) {
  Config c = baseline;
  for (const Speedup& s : speedupTable())
    if (s.math.math == Math::Keeps) s.off(c);
  json j = proto::configToJson(c);
  j.erase("name"), j.erase("seed");
  for (const char* k : {"threads", "log_every", "eval_every_steps", "stop_at_accuracy"}) j["train"].erase(k);
  return j;
}

fs::path referenceFile(const fs::path& dir) { return dir / proto::kReferenceFile; }

struct Slot {
  uint64_t seed = 0;
  std::string dir;      // relative to the folder
  std::string status;   // "" until it ran
};

std::vector<proto::ReferenceRunRecord> slotRecords(const std::vector<Slot>& slots) {
  std::vector<proto::ReferenceRunRecord> runs;
  for (const Slot& s : slots) runs.push_back({int64_t(s.seed), s.dir, s.status});
  return runs;
}

// The first field where two identities differ ("optim.lr: 0.01 here, 0.05 in the folder").
std::string firstDifference(const json& here, const json& there) {
  const auto diff = compare::configDiff(there, here);
  if (diff.empty()) return "";
  return diff.front().path + ": " + diff.front().after + " here, " + diff.front().before + " in the folder";
}

bool usable(const std::string& status) { return status == proto::kStatusOk || status == proto::kStatusEarlyStopped; }

// The slots reference.json lists; "" when they read, else why not (a list that is not one).
std::string slotsOf(const json& doc, const proto::ReferenceRecord& record, std::vector<Slot>& slots) {
  if (std::string why = proto::referenceRunsProblem(doc); !why.empty()) return why;
  for (const proto::ReferenceRunRecord& r : record.runs) slots.push_back({uint64_t(r.seed), r.dir, r.status});
  return {};
}

// Whether run folder `run` is one of this experiment's reference runs: "" when it is (its slot in
// `slot`, its evaluation interval in `every`), else why not, in words.
std::string adoptable(const fs::path& dir, const fs::path& run, const json& identity, Slot& slot, int64_t& every) {
  const proto::StoredRecord config = proto::readRecordFile(run / "config.json");
  if (config.missing()) return "it has no config.json (its run never started)";
  if (config.unreadable()) return "its config.json is unreadable: " + config.why;
  auto c = proto::configFromJson(config.doc);
  if (!c.ok()) return "its config.json is not a config: " + c.error().message;
  if (const json its = experimentIdentity(*c); its != identity) {
    const std::string why = firstDifference(identity, its);
    return "it is another experiment's run (" + (why.empty() ? std::string("its config differs") : why) + ")";
  }
  if (every > 0 && c->train.eval_every_steps != every)
    return "it evaluates every " + std::to_string(c->train.eval_every_steps) + " steps, the others every " + std::to_string(every);
  every = c->train.eval_every_steps;
  const std::string status = proto::RunDir{run}.summaryStatus();
  slot = {c->seed, fs::relative(run, dir).string(), status.empty() ? "running" : status};
  return {};
}

// The slots rebuilt from the run folders under runs/ that are this experiment's: one a seed (a
// finished run before one that is not), in seed order. Each folder not taken is said on the log.
std::vector<Slot> adoptRuns(const fs::path& dir, const json& identity, int64_t& every, std::FILE* log) {
  std::error_code ec;
  std::vector<fs::path> runs;
  for (fs::directory_iterator it(dir / "runs", ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) runs.push_back(it->path());
  std::sort(runs.begin(), runs.end());
  std::vector<Slot> slots;
  int64_t adoptedEvery = 0;
  for (const fs::path& run : runs) {
    Slot slot;
    if (const std::string why = adoptable(dir, run, identity, slot, adoptedEvery); !why.empty()) {
      if (log) std::fprintf(log, "reference run %s is not taken into the record: %s\n", run.c_str(), why.c_str());
      continue;
    }
    auto same = std::find_if(slots.begin(), slots.end(), [&](const Slot& x) { return x.seed == slot.seed; });
    if (same == slots.end()) slots.push_back(slot);
    else if (!usable(same->status)) *same = slot;
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.seed < b.seed; });
  if (adoptedEvery > 0) every = adoptedEvery;
  return slots;
}

// reference.json gone or unreadable (`why`): an unreadable one kept aside, and the slots rebuilt
// from the run folders, said on the log. A new folder (no runs) gives no slots, in silence.
Result<std::vector<Slot>> rebuildSlots(const fs::path& dir, const json& identity, const std::string& why, int64_t& every,
                                       std::FILE* log) {
  std::error_code ec;
  const bool hasRuns = fs::is_directory(dir / "runs", ec) && !fs::is_empty(dir / "runs", ec);
  if (why.empty() && !hasRuns) return std::vector<Slot>();
  std::string kept;
  if (!why.empty()) {
    auto aside = proto::keepAside(referenceFile(dir));
    if (!aside.ok())
      return makeError(Errc::Io, referenceFile(dir).string() + " is unreadable: " + why + "; " + aside.error().message +
                                     ": move it away, and the next try rebuilds it from the run folders");
    kept = "; kept as " + aside->filename().string();
  }
  std::vector<Slot> slots = adoptRuns(dir, identity, every, log);
  const auto finished = std::count_if(slots.begin(), slots.end(), [](const Slot& x) { return usable(x.status); });
  if (log)
    std::fprintf(log, "%s %s%s: the record is rebuilt from the run folders in %s: %zu reference run(s) taken, %ld finished\n",
                 referenceFile(dir).c_str(), why.empty() ? "is gone" : ("is unreadable: " + why).c_str(), kept.c_str(),
                 (dir / "runs").c_str(), slots.size(), long(finished));
  return slots;
}

// The folder's record, checked against this experiment: its slots. A folder of another experiment
// or dataset is refused naming the field; a record gone or unreadable is rebuilt from the run
// folders (rebuildSlots). `every` becomes the folder's own evaluation interval when it has one (an
// earlier rule's runs stay usable).
Result<std::vector<Slot>> loadSlots(const fs::path& dir, const std::string& key, const json& identity,
                                    const std::string& datasetId, int64_t& every, std::FILE* log) {
  const proto::StoredRecord stored = records::readStored(referenceFile(dir));
  if (!stored.read()) return rebuildSlots(dir, identity, stored.why, every, log);
  const proto::ReferenceRecord record = proto::referenceRecordFromJson(stored.doc);
  const std::string where = referenceFile(dir).string();
  if (record.key != key || record.config != identity) {
    const std::string why = firstDifference(identity, record.config.is_object() ? record.config : json::object());
    return makeError(Errc::InvalidConfig, where + " holds the reference runs of another experiment (" +
                                              (why.empty() ? "its key differs" : why) +
                                              "): give another --references folder or remove it");
  }
  if (!datasetId.empty() && record.dataset_id != datasetId)
    return makeError(Errc::InvalidConfig, where + ": the dataset changed since its runs (data.dataset's files differ): "
                                          "its runs do not measure this data; remove the folder to run them again");
  std::vector<Slot> slots;
  if (const std::string why = slotsOf(stored.doc, record, slots); !why.empty()) return rebuildSlots(dir, identity, why, every, log);
  if (record.eval_every_steps > 0) every = record.eval_every_steps;
  return slots;
}

// Why slot s has no finished run to reuse, in words ("is gone", "was cut short", "ended failed").
std::string notFinished(const fs::path& dir, const Slot& s) {
  std::error_code ec;
  if (!fs::exists(dir / s.dir, ec)) return "is gone";
  auto run = records::loadRun(dir / s.dir);
  if (!run.ok()) return "cannot be read (" + run.error().message + ")";
  if (!run->finished) return "was cut short (it has no summary.json)";
  if (!usable(run->status)) return "ended " + run->status;
  return "ended without an evaluation";
}

// A finished run of the slot, loaded from its folder (whatever the record said); nullopt when it
// is gone, cut or failed.
std::optional<records::RunRecord> finishedRun(const fs::path& dir, const Slot& s) {
  if (s.dir.empty()) return std::nullopt;
  return finishedTargetRun(dir / s.dir);
}

// A new folder name for the seed: seed-<s>, then seed-<s>-r2, ...: never one that exists or that
// the record names (a gone run's name is not given to its rerun).
std::string freshDir(const fs::path& dir, uint64_t seed, const std::vector<Slot>& slots) {
  std::error_code ec;
  const auto taken = [&](const std::string& name) {
    return fs::exists(dir / name, ec) || std::any_of(slots.begin(), slots.end(), [&](const Slot& x) { return x.dir == name; });
  };
  std::string name = "runs/seed-" + std::to_string(seed);
  for (int k = 2; taken(name); ++k) name = "runs/seed-" + std::to_string(seed) + "-r" + std::to_string(k);
  return name;
}

}  // namespace

int64_t samplesPerStep(const Config& c) {
  return int64_t(std::max(1, c.train.batch_size)) * std::max(1, c.speedups.devices) * std::max(1, c.speedups.grad_accumulation);
}

std::optional<records::RunRecord> finishedTargetRun(const fs::path& dir) {
  auto run = records::loadRun(dir);
  if (!run.ok() || !run->finished || !usable(run->status) || run->evals.empty()) return std::nullopt;
  return std::move(*run);
}

fs::path defaultReferencesDir() {
  if (const char* env = std::getenv("WB_REFERENCES_DIR"); env && *env) return env;
  return defaultRunsRoot().parent_path() / "references";
}

std::string referenceKey(const Config& baseline, const std::string& datasetId) {
  return records::storeKey({{"config", experimentIdentity(baseline)}, {"dataset_id", datasetId}});
}

int64_t referenceEvalEvery(const Config& c, int64_t trainSamples) {
  const int64_t stepsPerEpoch = std::max<int64_t>(1, trainSamples / samplesPerStep(c));
  int64_t runSteps = stepsPerEpoch * std::max(1, c.train.epochs);
  if (c.train.max_steps > 0) runSteps = std::min(runSteps, c.train.max_steps);
  return std::max<int64_t>({1, stepsPerEpoch / kReferenceEvalsPerEpoch, runSteps / kReferenceEvaluationsPerRun});
}

int referenceParallel(const Config& baseline, bool onCpu, int runs) {
  if (!onCpu) return 1;
  return std::clamp(logicalCores() / std::max(1, baseline.speedups.devices), 1, std::max(1, runs));
}

Config sharingTheCores(Config c, int atOnce) {
  if (atOnce > 1 && c.train.threads == 0)
    c.train.threads = std::max(1, logicalCores() / (atOnce * std::max(1, c.speedups.devices)));
  return c;
}

std::vector<stats::TargetRun> targetRuns(const std::vector<records::RunRecord>& runs, double target) {
  std::vector<stats::TargetRun> out;
  for (const records::RunRecord& r : runs) {
    stats::TargetRun t;
    t.seed = r.config.value("seed", uint64_t{0});
    const auto hit = std::find_if(r.evals.begin(), r.evals.end(), [&](const auto& e) { return e.val_acc >= target; });
    t.reached = hit != r.evals.end();
    const int64_t samples = t.reached ? hit->samples : (r.evals.empty() ? 0 : r.evals.back().samples);
    if (samples > 0) t.samples = double(samples);
    out.push_back(t);
  }
  return out;
}

namespace {

struct Store {
  const ReferenceOptions& o;
  fs::path dir;
  std::string key;
  json identity;
  int64_t every = 0;
  std::vector<Slot> slots;
  std::mutex mu;

  Status save() {
    const proto::ReferenceRecord record{key, o.dataset_id, identity, every, wb::utcNowIso(), slotRecords(slots)};
    return writeFileAtomic(referenceFile(dir), proto::referenceRecordJson(record).dump(2) + "\n");
  }

  Config configOf(uint64_t seed) const {
    Config c = o.baseline;
    c.seed = seed;
    c.train.eval_every_steps = every;
    c.train.stop_at_accuracy = 0;
    c.name = o.baseline.name + "-reference-" + std::to_string(seed);
    return o.run_many ? c : sharingTheCores(c, o.parallel);
  }

  // Claims a new folder for slot i (before another thread names one) and says so on the log.
  ConfigRun claim(size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t seed = slots[i].seed;
    const std::string rel = freshDir(dir, seed, slots);
    fs::create_directories(dir / rel);
    slots[i].dir = rel, slots[i].status = "running";
    if (o.log) std::fprintf(o.log, "reference run, seed %llu -> %s\n", (unsigned long long)seed, (dir / rel).c_str());
    return {configOf(seed), dir / rel, "reference run, seed " + std::to_string(seed)};
  }

  // Runs slot i in a new folder; its status goes into the record.
  Status runSlot(size_t i) {
    const ConfigRun run = claim(i);
    auto out = launchOne(run.config, run.dir, UserCommand{}, o.cli_path, run.who);
    std::lock_guard<std::mutex> lock(mu);
    slots[i].status = out.ok() ? out->status : proto::kStatusFailed;
    if (auto st = save(); !st.ok()) return st;
    if (!out.ok()) return out.error();
    return {};
  }

  // Slot i ended as `end` (run elsewhere): its folder (a rerun's, relative) and status.
  void record(size_t i, const ConfigRunEnd& end) {
    std::error_code ec;
    const fs::path rel = fs::relative(end.dir, dir, ec);
    if (!ec && !rel.empty()) slots[i].dir = rel.string();
    slots[i].status = end.status;
    if (o.log && !end.problem.empty())
      std::fprintf(o.log, "reference run %s: %s\n", end.dir.c_str(), end.problem.c_str());
  }
};

// The slots to run now: each seed without a finished run (again, in a new folder), then new
// seeds up to `runs`. A rerun is said on the log.
std::vector<size_t> slotsToRun(Store& s, std::vector<std::optional<records::RunRecord>>& loaded) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < s.slots.size(); ++i) {
    loaded.push_back(finishedRun(s.dir, s.slots[i]));
    if (loaded.back()) {
      s.slots[i].status = loaded.back()->status;  // the folder's word, over a record saved before it ended
      continue;
    }
    if (s.o.log && !s.slots[i].dir.empty())
      std::fprintf(s.o.log, "reference run %s (seed %llu) %s: it runs again in a new folder\n", (s.dir / s.slots[i].dir).c_str(),
                   (unsigned long long)s.slots[i].seed, notFinished(s.dir, s.slots[i]).c_str());
    todo.push_back(i);
  }
  for (uint64_t seed = kFirstReferenceSeed; int(s.slots.size()) < s.o.runs; ++seed) {
    const bool taken = std::any_of(s.slots.begin(), s.slots.end(), [&](const Slot& x) { return x.seed == seed; });
    if (taken) continue;
    s.slots.push_back({seed, "", ""});
    loaded.emplace_back();
    todo.push_back(s.slots.size() - 1);
  }
  return todo;
}

// Runs `todo` through options.run_many: all handed over at once, each slot recorded as it ended.
Status runElsewhere(Store& s, const std::vector<size_t>& todo) {
  std::vector<ConfigRun> runs;
  for (size_t i : todo) runs.push_back(s.claim(i));
  if (auto st = s.save(); !st.ok()) return st;
  auto ends = s.o.run_many(runs);
  if (ends.ok())
    for (size_t k = 0; k < todo.size() && k < ends->size(); ++k) s.record(todo[k], (*ends)[k]);
  if (auto st = s.save(); !st.ok()) return st;
  if (!ends.ok()) return ends.error();
  return {};
}

// Runs `todo`, `parallel` at a time; the first error, if any (the others still finish).
Status runAll(Store& s, const std::vector<size_t>& todo) {
  const int total = int(s.slots.size());
  int done = total - int(todo.size());
  if (s.o.on_progress) s.o.on_progress(done, total);
  if (s.o.run_many && !todo.empty()) return runElsewhere(s, todo);
  std::mutex mu;
  size_t next = 0;
  Status first;
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= todo.size() || !first.ok() || (s.o.stop && s.o.stop->load())) return;
        i = todo[next++];
      }
      const Status st = s.runSlot(i);
      std::lock_guard<std::mutex> lock(mu);
      if (!st.ok() && first.ok()) first = st;
      if (st.ok() && s.o.on_progress) s.o.on_progress(++done, total);
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::max(1, s.o.parallel) && size_t(k) < todo.size(); ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return first;
}

}  // namespace

Result<ReferenceRuns> ensureReferenceRuns(const ReferenceOptions& o) {
  Store s{o};
  s.identity = experimentIdentity(o.baseline);
  s.key = referenceKey(o.baseline, o.dataset_id);
  s.dir = o.store / s.key;
  s.every = referenceEvalEvery(o.baseline, o.train_samples);
  auto slots = loadSlots(s.dir, s.key, s.identity, o.dataset_id, s.every, o.log);
  if (!slots.ok()) return slots.error();
  s.slots = std::move(*slots);
  std::error_code ec;
  fs::create_directories(s.dir / "runs", ec);
  if (ec) return makeError(Errc::Io, "cannot create " + (s.dir / "runs").string() + ": " + ec.message());
  std::vector<std::optional<records::RunRecord>> loaded;
  const std::vector<size_t> todo = slotsToRun(s, loaded);
  if (auto st = s.save(); !st.ok()) return st.error();
  const Status ran = runAll(s, todo);
  if (o.stop && o.stop->load()) return makeError(Errc::Cancelled, "the reference runs were stopped; their finished runs are kept");
  if (!ran.ok()) return ran.error();
  ReferenceRuns r;
  r.dir = s.dir, r.key = s.key, r.eval_every_steps = s.every;
  for (size_t i = 0; i < s.slots.size(); ++i) {
    auto run = loaded[i] ? loaded[i] : finishedRun(s.dir, s.slots[i]);
    if (!run)
      return makeError(Errc::Internal, "reference run " + (s.dir / s.slots[i].dir).string() + " ended " +
                                           s.slots[i].status + ": see its logs; the same command runs it again");
    (std::find(todo.begin(), todo.end(), i) == todo.end() ? r.reused : r.ran)++;
    r.runs.push_back(std::move(*run));
  }
  r.resolution = double(s.every * samplesPerStep(o.baseline));
  return r;
}

std::vector<records::RunRecord> storedReferenceRuns(const fs::path& store, const Config& baseline, const std::string& dataset_id) {
  const fs::path dir = store / referenceKey(baseline, dataset_id);
  const proto::StoredRecord doc = proto::readRecordFile(referenceFile(dir));
  std::vector<Slot> slots;
  if (!doc.read() || !doc.doc.is_object() || !slotsOf(doc.doc, proto::referenceRecordFromJson(doc.doc), slots).empty()) return {};
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.seed < b.seed; });
  std::vector<records::RunRecord> runs;
  for (const Slot& slot : slots)
    if (auto run = finishedRun(dir, slot)) runs.push_back(std::move(*run));
  return runs;
}

}  // namespace wb::experiment
