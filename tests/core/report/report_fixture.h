#pragma once
// Hand-made runs for the report tests: events and summary.json written the way the trainer and
// the launcher write them (the typed events of wb/proto/event_types.h, encodeEvent into
// events.jsonl; the typed summary of wb/proto/run_summary.h through its own writer; config.json,
// env.json), so the tests read real files through the same loader as `compare` does.
#include <QDir>
#include <QString>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wb/common/config.h"
#include "wb/common/fs.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_summary.h"
#include "wb/advice/advisor.h"
#include "wb/records/run_record.h"

namespace fixture {

using nlohmann::json;

// The default experiment's config.json, made once from a named Config (a Config{} temporary
// trips GCC 12's -Wmaybe-uninitialized on its strings' destructors).
inline const json& defaultConfigJson() {
  static const json config = [] {
    const wb::Config defaults;
    return wb::proto::configToJson(defaults);
  }();
  return config;
}

struct FakeRun {
  json config = defaultConfigJson();
  std::vector<json> events;
  std::optional<wb::proto::RunSummary> summary;
  json env = json::object();

  FakeRun() { set("speedups.inference_eval", false); }

  FakeRun& set(const std::string& dotted, json value) {
    std::string p = "/" + dotted;
    for (auto& c : p)
      if (c == '.') c = '/';
    config[json::json_pointer(p)] = std::move(value);
    return *this;
  }
  using Speedups = std::map<std::string, wb::proto::SpeedupStatus>;
  FakeRun& start(const std::string& device = "cpu", int cores = 4, Speedups speedups = {}) {
    wb::proto::StartEvent e;
    e.device = device;
    e.host = {"testhost", "Test CPU", cores};
    e.world_size = 1;
    e.speedups = std::move(speedups);
    events.push_back(wb::proto::toEvent(e, 0, 0.0));
    return *this;
  }
  // A step event; ms = {data, h2d, fwd, bwd, opt, comm}.
  FakeRun& step(int epoch, int64_t step, int64_t samples, double t, double loss,
                std::vector<double> ms = {1, 0, 2, 3, 1, 0}, int64_t rssPeak = 100 << 20, int rank = 0) {
    // Written through the trainer's own typed writer (wb/proto/event_types.h), so the fixture
    // cannot drift from the schema.
    wb::proto::StepEvent e;
    e.epoch = epoch;
    e.step = step;
    e.samples = samples;
    e.loss = loss;
    e.lr = 0.01;
    e.samples_per_s = 1000.0;
    e.ms = wb::proto::StepPhases{ms[0], ms[1], ms[2], ms[3], ms[5], ms[4]};
    e.mem = wb::proto::MemoryPart{};
    e.mem->device = "cpu";
    e.mem->rss = rssPeak / 2;
    e.mem->rss_peak = rssPeak;
    e.mem->peak = 0;
    events.push_back(wb::proto::toEvent(e, rank, t));
    return *this;
  }
  // The step event's CPU over its interval (the last step added).
  FakeRun& stepCpu(double processCores, double machineBusyCores, int cores = 2) {
    const wb::proto::CpuPart cpu{processCores, machineBusyCores, machineBusyCores - processCores, cores, std::nullopt};
    wb::proto::writeFields(cpu, events.back()["cpu"] = json::object());
    return *this;
  }
  FakeRun& amp(double scale, int64_t skipped) {
    wb::proto::writeFields(wb::proto::AmpPart{scale, skipped}, events.back()["amp"] = json::object());
    return *this;
  }
  FakeRun& deviceMem(int64_t peak) {
    wb::proto::MemoryPart mem = *wb::proto::readStepEvent(events.back()).mem;
    mem.device = "cuda:0";
    mem.peak = peak;
    wb::proto::writeFields(mem, events.back()["mem"] = json::object());
    return *this;
  }
  FakeRun& eval(int epoch, double t, double acc, double evalMs = 100, int64_t samples = 0) {
    wb::proto::EvalEvent e;
    e.epoch = epoch;
    e.step = epoch * 100;
    e.samples = samples;
    e.val_acc = acc;
    e.val_loss = 1.0 - acc;
    e.eval_ms = evalMs;
    events.push_back(wb::proto::toEvent(e, 0, t));
    return *this;
  }
  FakeRun& epoch(int epoch, double t, double seconds, double sps = 1000) {
    wb::proto::EpochEvent e;
    e.epoch = epoch;
    e.seconds = seconds;
    e.samples_per_s = sps;
    e.train_samples_per_s = sps;
    e.train_loss = 0.5;
    events.push_back(wb::proto::toEvent(e, 0, t));
    return *this;
  }
  FakeRun& earlyStop(int bestEpoch) {
    wb::proto::EarlyStopEvent e;
    e.reason = "no improvement";
    e.best_epoch = bestEpoch;
    e.best_value = 0.3;
    e.monitor = "val_loss";
    events.push_back(wb::proto::toEvent(e, 0, events.empty() ? 0.0 : events.back().value("t", 0.0)));
    return *this;
  }
  FakeRun& warning(const std::string& message) {
    events.push_back(wb::proto::toEvent(wb::proto::WarningEvent{message, std::nullopt}, 0, 0.0));
    return *this;
  }
  FakeRun& error(const std::string& message, int rank) {
    const double t = events.empty() ? 0.0 : events.back().value("t", 0.0);
    events.push_back(wb::proto::toEvent(wb::proto::ErrorEvent{message, "internal", std::nullopt}, rank, t));
    return *this;
  }
  // The end event and summary.json, filled as the trainer and the launcher fill them
  // (train_samples_per_s from the step events' samples and times).
  FakeRun& end(const std::string& status, double wallS) {
    wb::proto::EndEvent e;
    e.status = status;
    e.summary.status = status;
    e.summary.wall_s = wallS;
    e.summary.run_wall_s = wallS + 1.5;
    e.summary.time_to_first_step_s = 1.25;
    e.summary.eval_s = evalSeconds();
    if (double s = trainSeconds(); s > 0) {
      e.summary.train_s = s;
      e.summary.train_samples = trainSamples();
      e.summary.train_samples_per_s = static_cast<double>(trainSamples()) / s;
    }
    events.push_back(wb::proto::toEvent(e, 0, wallS));
    summary = e.summary;
    return *this;
  }
  // Changes summary.json and the end event's summary (the last event): the field `key` set to
  // value (an older writer's key is kept as a field the summary does not know), or removed by a
  // discarded json; through the summary's own reader and writer.
  FakeRun& measured(const std::string& key, json value) {
    json s = wb::proto::toJson(*summary);
    if (value.is_discarded()) s.erase(key);
    else s[key] = std::move(value);
    return setSummary(wb::proto::readRunSummary(s));
  }
  FakeRun& setSummary(wb::proto::RunSummary s) {
    summary = std::move(s);
    events.back()["summary"] = wb::proto::toJson(*summary);
    return *this;
  }
  // summary.cpu: the machine's other load while the run ran, judged as the launcher judges it.
  FakeRun& cpu(double otherLoad, int cores = 2, double used = 1.0, int asked = 1) {
    wb::proto::RunCpu c;
    c.cores = cores;
    c.asked_cores = asked;
    c.used_cores = used;
    c.other_load_cores = otherLoad;
    c.contended = wb::isContended(otherLoad);
    if (*c.contended) c.note = "busy";
    wb::proto::RunSummary s = *summary;
    s.cpu = c;
    return setSummary(std::move(s));
  }

  // Rank 0's samples between its first and last step events, and the seconds between them.
  int64_t trainSamples() const { return static_cast<int64_t>(lastStep("samples") - firstStep("samples")); }
  double trainSeconds() const { return lastStep("t") - firstStep("t"); }
  double evalSeconds() const {
    double ms = 0;
    for (const auto& ev : events)
      if (wb::proto::isEvent<wb::proto::EvalEvent>(ev)) ms += ev.value("eval_ms", 0.0);
    return ms / 1000.0;
  }

  // Writes the run folder <parent>/<name>; `truncate` cuts the last event line in half.
  std::string write(const QString& parent, const QString& name, bool truncate = false) const {
    const std::string dir = QDir(parent).filePath(name).toStdString();
    wb::proto::RunDir rd{dir};
    (void)rd.create();
    (void)wb::proto::writeJsonAtomic(rd.config(), config);
    if (!env.empty()) (void)wb::proto::writeJsonAtomic(rd.env(), env);
    std::ofstream out(rd.events(), std::ios::binary);
    for (size_t i = 0; i < events.size(); ++i) {
      std::string line = wb::proto::encodeEvent(events[i]);
      if (truncate && i + 1 == events.size()) {
        out << line.substr(0, line.size() / 2);
      } else {
        out << line << '\n';
      }
    }
    out.close();
    if (summary) (void)wb::proto::writeJsonAtomic(rd.summary(), wb::proto::toJson(*summary));
    return dir;
  }

  double firstStep(const char* key) const { return stepValue(key, false); }
  double lastStep(const char* key) const { return stepValue(key, true); }
  double stepValue(const char* key, bool last) const {
    double v = 0;
    bool any = false;
    for (const auto& ev : events)
      if (wb::proto::isEvent<wb::proto::StepEvent>(ev) && ev.value("rank", 0) == 0 && (last || !any)) v = ev.value(key, 0.0), any = true;
    return v;
  }

  wb::records::RunRecord record(const std::string& id = "run") const {
    auto r = wb::records::recordFromEvents(events);
    r.config = config;
    r.id = id;
    r.dir = "/runs/" + id;
    if (summary) r.summary = *summary, r.finished = true, r.status = summary->status.value_or("running");
    r.env = env;
    return r;
  }
};

// Two epochs; evaluations reach acc1 at t=t1 and acc2 at t=t2; step events every second of t.
inline FakeRun twoEpochRun(double t1, double acc1, double t2, double acc2, int64_t samplesPerSecond) {
  FakeRun r;
  r.start();
  int64_t step = 0;
  double t = 0;
  for (int ep = 1; ep <= 2; ++ep) {
    const double epochEnd = ep == 1 ? t1 : t2;
    const double epochStart = t;
    for (t = epochStart + 1; t < epochEnd - 0.5; t += 1) {
      step += 10;
      // The first interval (warm-up) is deliberately slow: half the rate, plus an eval gap.
      int64_t samples = static_cast<int64_t>((t - 1) * samplesPerSecond) + samplesPerSecond / 2;
      r.step(ep, step, samples, t, 2.0 / (t + 1));
    }
    r.eval(ep, epochEnd, ep == 1 ? acc1 : acc2).epoch(ep, epochEnd, epochEnd - epochStart);
    t = epochEnd;
  }
  return r;
}

// A run with three step events (the first is warm-up and ignored) with the split `ms` (data,
// copy, forward, backward, optimiser, comm), `workers` loader workers on `cores` cores.
inline FakeRun withSplit(std::vector<double> ms, int workers, int cores) {
  FakeRun r;
  r.set("speedups.workers", workers);
  r.start("cpu", cores);
  r.step(1, 10, 640, 1, 1.0, {50, 0, 1, 1, 1, 0});  // warm-up: would look data-bound
  r.step(1, 20, 1280, 2, 0.9, ms).step(1, 30, 1920, 3, 0.8, ms);
  return r;
}

// The advisor's verdict with `code` among `vs`; null when there is none.
inline const wb::advice::Advice* findAdvice(const std::vector<wb::advice::Advice>& vs, const std::string& code) {
  for (const auto& v : vs)
    if (v.code == code) return &v;
  return nullptr;
}

}  // namespace fixture
