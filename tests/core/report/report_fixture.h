#pragma once
// Hand-made runs for the report tests: events written the way the trainer and the launcher
// write them (the typed events of wb/proto/event_types.h, encodeEvent into events.jsonl;
// config.json, summary.json, env.json),
// so the tests read real files through the same loader as `compare` does.
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
#include "wb/report/run_record.h"

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
  std::optional<json> summary;
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
  FakeRun& eval(int epoch, double t, double acc, double evalMs = 100) {
    wb::proto::EvalEvent e;
    e.epoch = epoch;
    e.step = epoch * 100;
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
  // The end event and summary.json, as the current writer fills them (train_samples_per_s from
  // the step events' samples and times; no older samples_per_s).
  FakeRun& end(const std::string& status, double wallS) {
    wb::proto::EndEvent e;
    e.status = status;
    e.summary = {{"wall_s", wallS}, {"run_wall_s", wallS + 1.5}, {"time_to_first_step_s", 1.25}, {"eval_s", evalSeconds()}};
    if (double s = trainSeconds(); s > 0) {
      e.summary["train_s"] = s;
      e.summary["train_samples"] = trainSamples();
      e.summary["train_samples_per_s"] = static_cast<double>(trainSamples()) / s;
    }
    events.push_back(wb::proto::toEvent(e, 0, wallS));
    summary = e.summary;
    (*summary)["status"] = status;
    return *this;
  }
  // Sets summary fields (summary.json and the end event's summary): null to write null, a
  // discarded json to remove one.
  FakeRun& measured(const std::string& key, json value) {
    for (json* s : {&*summary, &events.back()["summary"]}) {
      if (value.is_discarded()) s->erase(key);
      else (*s)[key] = value;
    }
    return *this;
  }
  // summary.cpu: the machine's other load while the run ran (contended at 0.3 cores and above).
  FakeRun& cpu(double otherLoad, int cores = 2, double used = 1.0, double asked = 1.0) {
    json c = {{"cores", cores}, {"asked_cores", asked}, {"used_cores", used}, {"other_load_cores", otherLoad},
              {"contended", otherLoad >= 0.3}};
    if (otherLoad >= 0.3) c["note"] = "busy";
    return measured("cpu", c);
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
    if (summary) (void)wb::proto::writeJsonAtomic(rd.summary(), *summary);
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

  wb::report::RunRecord record(const std::string& id = "run") const {
    auto r = wb::report::recordFromEvents(events);
    r.config = config;
    r.id = id;
    r.dir = "/runs/" + id;
    if (summary) r.summary = *summary, r.finished = true, r.status = (*summary)["status"];
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

}  // namespace fixture
