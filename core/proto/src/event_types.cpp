#include "wb/proto/event_types.h"

#include <algorithm>

#include "wb/proto/fields.h"
#include "wb/proto/schema.h"

namespace wb::proto {
using nlohmann::json;

namespace {

WB_FIELDS(Envelope) {
  f("v", e.v);
  f("type", e.type);
  f("rank", e.rank);
  f("t", e.t);
  f("wall", e.wall);
}

WB_FIELDS(MemoryPart) {
  f("device", e.device);
  f("alloc", e.alloc);
  f("reserved", e.reserved);
  f("peak", e.peak);
  f("rss", e.rss);
  f("rss_peak", e.rss_peak);
  f("page_faults_per_step", e.page_faults_per_step);
}

WB_FIELDS(CpuPart) {
  f("process_cores", e.process_cores);
  f("machine_busy_cores", e.machine_busy_cores);
  f("other_cores", e.other_cores);
  f("cores", e.cores);
  f("threads", e.threads);
}

WB_FIELDS(CommPart) {
  f("comm_ms", e.comm_ms);
  f("launch_ms", e.launch_ms);
  f("wait_ms", e.wait_ms);
  f("gather_ms", e.gather_ms);
  f("overlap", e.overlap);
  f("bytes_reduced", e.bytes_reduced);
  f("bytes_gathered", e.bytes_gathered);
  f("buckets", e.buckets);
  f("buckets_in_backward", e.buckets_in_backward);
  f("optimizer_state_bytes", e.optimizer_state_bytes);
}

WB_FIELDS(AmpPart) {
  f("scale", e.scale);
  f("skipped", e.skipped);
}

WB_FIELDS(StepPhases) {
  f("data", e.data);
  f("h2d", e.h2d);
  f("fwd", e.fwd);
  f("bwd", e.bwd);
  f("comm", e.comm);
  f("opt", e.opt);
  f("other", e.other);
}

WB_FIELDS(StepEvent) {
  f("epoch", e.epoch);
  f("step", e.step);
  f("samples", e.samples);
  f("loss", e.loss);
  f("lr", e.lr);
  f("samples_per_s", e.samples_per_s);
  f("step_ms", e.step_ms);
  f("ms", e.ms);
  f("mem", e.mem);
  f("cpu", e.cpu);
  f("comm", e.comm);
  f("amp", e.amp);
  f("flops", e.flops);
  f("progress", e.progress);
  f("eta_s", e.eta_s);
}

WB_FIELDS(EvalEvent) {
  f("epoch", e.epoch);
  f("step", e.step);
  f("samples", e.samples);
  f("val_loss", e.val_loss);
  f("val_acc", e.val_acc);
  f("eval_ms", e.eval_ms);
  f("eval_samples", e.eval_samples);
  f("inference_mode", e.inference_mode);
  f("mem", e.mem);
}

WB_FIELDS(EpochEvent) {
  f("epoch", e.epoch);
  f("seconds", e.seconds);
  f("train_seconds", e.train_seconds);
  f("samples", e.samples);
  f("train_samples_per_s", e.train_samples_per_s);
  f("samples_per_s", e.samples_per_s);
  f("train_loss", e.train_loss);
  f("complete", e.complete);
}

WB_FIELDS(SpeedupStatus) {
  f("requested", e.requested);
  f("active", e.active);
  f("note", e.note);
  f("optimizer_state_bytes", e.optimizer_state_bytes);
  f("gradient_memory_saved", e.gradient_memory_saved);
}

WB_FIELDS(HostInfo) {
  f("name", e.name);
  f("cpu", e.cpu);
  f("cores", e.cores);
}

WB_FIELDS(HostUse) {
  f("memory", e.memory);
  f("threads", e.threads);
}

WB_FIELDS(ModelInfo) {
  f("name", e.name);
  f("parameters", e.parameters);
}

WB_FIELDS(DatasetInfo) {
  f("name", e.name);
  f("train", e.train);
  f("val", e.val);
  f("classes", e.classes);
  f("channels", e.channels);
  f("image_size", e.image_size);
}

WB_FIELDS(BatchInfo) {
  f("per_rank", e.per_rank);
  f("global", e.global);
  f("note", e.note);
}

WB_FIELDS(ResumedFrom) {
  f("path", e.path);
  f("epoch", e.epoch);
  f("batch_in_epoch", e.batch_in_epoch);
  f("step", e.step);
}

WB_FIELDS(StartEvent) {
  f("config", e.config);
  f("versions", e.versions);
  f("backend_check", e.backend_check);
  f("host", e.host);
  f("device", e.device);
  f("threads", e.threads);
  f("host_use", e.host_use);
  f("world_size", e.world_size);
  f("local_rank", e.local_rank);
  f("model", e.model);
  f("dataset", e.dataset);
  f("steps_per_epoch", e.steps_per_epoch);
  f("total_steps", e.total_steps);
  f("batch", e.batch);
  f("lr_scaling", e.lr_scaling);
  f("resumed_from", e.resumed_from);
  f("speedups", e.speedups);
  f("dist", e.dist);
}

WB_FIELDS(RunEvent) {
  f("run_dir", e.run_dir);
  f("run_id", e.run_id);
  f("name", e.name);
  f("world_size", e.world_size);
  f("config", e.config);
  f("resume", e.resume);
  f("config_changes", e.config_changes);
  f("fine_tuned_from", e.fine_tuned_from);
}

WB_FIELDS(WarningEvent) {
  f("message", e.message);
  f("path", e.path);
}

WB_FIELDS(ErrorEvent) {
  f("message", e.message);
  f("code", e.code);
  f("log_tail", e.log_tail);
}

WB_FIELDS(EarlyStopEvent) {
  f("reason", e.reason);
  f("best_epoch", e.best_epoch);
  f("best_value", e.best_value);
  f("monitor", e.monitor);
  f("epochs_saved", e.epochs_saved);
}

WB_FIELDS(CheckpointEvent) {
  f("kind", e.kind);
  f("path", e.path);
  f("epoch", e.epoch);
  f("batch_in_epoch", e.batch_in_epoch);
  f("step", e.step);
}

WB_FIELDS(EndEvent) {
  f("status", e.status);
  f("summary", e.summary);
}

WB_FIELDS(LadderEvent) {
  f("out_dir", e.out_dir);
  f("repeats", e.repeats);
  f("steps", e.steps);
}

WB_FIELDS(RungStartEvent) {
  f("index", e.index);
  f("steps", e.steps);
  f("key", e.key);
  f("added", e.added);
  f("round", e.round);
  f("run_dir", e.run_dir);
}

WB_FIELDS(RungEndEvent) {
  f("index", e.index);
  f("key", e.key);
  f("round", e.round);
  f("run_dir", e.run_dir);
  f("status", e.status);
  f("error", e.error);
  f("wall_s", e.wall_s);
  f("best_val_acc", e.best_val_acc);
  f("contended", e.contended);
}

WB_FIELDS(LadderEndEvent) {
  f("status", e.status);
  f("out_dir", e.out_dir);
  f("ladder", e.ladder);
  f("answer", e.answer);
}

}  // namespace

json eventFieldLists() {
  const json memory = fieldKinds<MemoryPart>();
  return {{"envelope", fieldKinds<Envelope>()},
          {RunEvent::kType, fieldKinds<RunEvent>()},
          {StartEvent::kType, fieldKinds<StartEvent>()},
          {"start.host", fieldKinds<HostInfo>()},
          {"start.host_use", fieldKinds<HostUse>()},
          {"start.model", fieldKinds<ModelInfo>()},
          {"start.dataset", fieldKinds<DatasetInfo>()},
          {"start.batch", fieldKinds<BatchInfo>()},
          {"start.resumed_from", fieldKinds<ResumedFrom>()},
          {"start.speedups.*", fieldKinds<SpeedupStatus>()},
          {StepEvent::kType, fieldKinds<StepEvent>()},
          {"step.ms", fieldKinds<StepPhases>()},
          {"step.mem", memory},
          {"step.cpu", fieldKinds<CpuPart>()},
          {"step.comm", fieldKinds<CommPart>()},
          {"step.amp", fieldKinds<AmpPart>()},
          {EvalEvent::kType, fieldKinds<EvalEvent>()},
          {"eval.mem", memory},
          {EpochEvent::kType, fieldKinds<EpochEvent>()},
          {EarlyStopEvent::kType, fieldKinds<EarlyStopEvent>()},
          {CheckpointEvent::kType, fieldKinds<CheckpointEvent>()},
          {WarningEvent::kType, fieldKinds<WarningEvent>()},
          {ErrorEvent::kType, fieldKinds<ErrorEvent>()},
          {EndEvent::kType, fieldKinds<EndEvent>()}};
}

namespace {
// The run stream's types and their field lists (the ladder's stream is not a run folder's).
const json& runStreamLists() {
  static const json lists = eventFieldLists();
  return lists;
}
}  // namespace

bool knownEventType(const std::string& type) {
  return type != "envelope" && type.find('.') == std::string::npos && runStreamLists().contains(type);
}

std::vector<std::string> unknownEventFields(const json& event) {
  std::vector<std::string> out;
  const std::string type = stringOr(event, "type", {});
  if (!event.is_object() || !knownEventType(type)) return out;
  const json& own = runStreamLists()[type];
  const json& envelope = runStreamLists()["envelope"];
  for (auto it = event.begin(); it != event.end(); ++it)
    if (!own.contains(it.key()) && !envelope.contains(it.key())) out.push_back(it.key());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// A figure's value as the words quote it: short, whatever it holds.
std::string quoted(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// The first figure of `list` that `event` holds as something other than a number or null.
std::string notANumber(const json& event, const json& list, const std::string& type) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (*it != "number" && *it != "integer") continue;
    const auto v = event.find(it.key());
    if (v != event.end() && !v->is_number() && !v->is_null())
      return (type == EvalEvent::kType ? "an " : "a ") + type + " event's \"" + it.key() + "\" is " + quoted(*v) + ", not a number";
  }
  return "";
}
}  // namespace

std::string unreadableFigures(const json& event) {
  const std::string type = stringOr(event, "type", {});
  if (type != StepEvent::kType && type != EvalEvent::kType) return "";
  if (type == StepEvent::kType && !event.contains("loss")) return "a step event without \"loss\"";
  if (type == EvalEvent::kType && !event.contains("val_acc") && !event.contains("val_loss"))
    return "an eval event with neither \"val_acc\" nor \"val_loss\"";
  if (std::string why = notANumber(event, runStreamLists()[type], type); !why.empty()) return why;
  return notANumber(event, runStreamLists()["envelope"], type);
}

json makeEvent(const std::string& type, int rank, double t) {
  json ev = json::object();
  fieldsToJson(Envelope{kEventVersion, type, rank, t, unixSeconds()}, ev);
  return ev;
}

void writeFields(const StepEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const EvalEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const EpochEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const StartEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const RunEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const WarningEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const ErrorEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const EarlyStopEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const CheckpointEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const EndEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const LadderEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const RungStartEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const RungEndEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const LadderEndEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const HostInfo& h, json& object) { fieldsToJson(h, object); }
void writeFields(const SpeedupStatus& s, json& object) { fieldsToJson(s, object); }
void writeFields(const MemoryPart& m, json& object) { fieldsToJson(m, object); }
void writeFields(const CpuPart& c, json& object) { fieldsToJson(c, object); }
void writeFields(const CommPart& c, json& object) { fieldsToJson(c, object); }
void writeFields(const AmpPart& a, json& object) { fieldsToJson(a, object); }

Envelope readEnvelope(const json& event) { return readAs<Envelope>(event); }
StepEvent readStepEvent(const json& event) { return readAs<StepEvent>(event); }
EvalEvent readEvalEvent(const json& event) { return readAs<EvalEvent>(event); }
EpochEvent readEpochEvent(const json& event) { return readAs<EpochEvent>(event); }
StartEvent readStartEvent(const json& event) { return readAs<StartEvent>(event); }
RunEvent readRunEvent(const json& event) { return readAs<RunEvent>(event); }
WarningEvent readWarningEvent(const json& event) { return readAs<WarningEvent>(event); }
ErrorEvent readErrorEvent(const json& event) { return readAs<ErrorEvent>(event); }
EarlyStopEvent readEarlyStopEvent(const json& event) { return readAs<EarlyStopEvent>(event); }
CheckpointEvent readCheckpointEvent(const json& event) { return readAs<CheckpointEvent>(event); }
EndEvent readEndEvent(const json& event) { return readAs<EndEvent>(event); }
LadderEvent readLadderEvent(const json& event) { return readAs<LadderEvent>(event); }
RungStartEvent readRungStartEvent(const json& event) { return readAs<RungStartEvent>(event); }
RungEndEvent readRungEndEvent(const json& event) { return readAs<RungEndEvent>(event); }
LadderEndEvent readLadderEndEvent(const json& event) { return readAs<LadderEndEvent>(event); }
HostInfo readHostInfo(const json& object) { return readAs<HostInfo>(object); }
SpeedupStatus readSpeedupStatus(const json& object) { return readAs<SpeedupStatus>(object); }
MemoryPart readMemoryPart(const json& object) { return readAs<MemoryPart>(object); }
CpuPart readCpuPart(const json& object) { return readAs<CpuPart>(object); }
CommPart readCommPart(const json& object) { return readAs<CommPart>(object); }

}  // namespace wb::proto
