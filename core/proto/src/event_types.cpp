#include "wb/proto/event_types.h"

#include <type_traits>
#include <utility>

namespace wb::proto {
using nlohmann::json;

namespace {

// Each struct's fields, once: visit(e, f) calls f(name, member) in schema order, for the
// writer (const e) and the reader alike.
#define WB_FIELDS(T) \
  template <class E, class F> \
  std::enable_if_t<std::is_same_v<std::remove_const_t<E>, T>> visit(E& e, F&& f)

WB_FIELDS(StepPhases) {
  f("data", e.data);
  f("h2d", e.h2d);
  f("fwd", e.fwd);
  f("bwd", e.bwd);
  f("comm", e.comm);
  f("opt", e.opt);
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
}

#undef WB_FIELDS

struct Writer {
  json& out;
  void operator()(const char* key, int v) const { out[key] = v; }
  void operator()(const char* key, int64_t v) const { out[key] = v; }
  void operator()(const char* key, double v) const { out[key] = v; }
  void operator()(const char* key, bool v) const { out[key] = v; }
  void operator()(const char* key, const std::string& v) const { out[key] = v; }
  void operator()(const char* key, const json& v) const {
    if (!v.is_null()) out[key] = v;  // an absent part stays absent
  }
  template <class T>
  void operator()(const char* key, const std::optional<T>& v) const {
    if (v) (*this)(key, *v);
  }
  template <class T>
  void operator()(const char* key, const std::map<std::string, T>& items) const {
    json o = json::object();
    for (const auto& [name, item] : items) visit(item, Writer{o[name] = json::object()});
    out[key] = std::move(o);
  }
  template <class T>  // a struct of its own: an object
  auto operator()(const char* key, const T& v) const -> decltype(visit(v, std::declval<const Writer&>()), void()) {
    json o = json::object();
    visit(v, Writer{o});
    out[key] = std::move(o);
  }
};

// Whether j holds a value a member of type T can take (for optional members).
template <class T>
bool holds(const json& j) {
  if constexpr (std::is_same_v<T, std::string>) return j.is_string();
  else if constexpr (std::is_same_v<T, bool>) return j.is_boolean();
  else if constexpr (std::is_arithmetic_v<T>) return j.is_number();
  else return j.is_object() && !j.empty();
}

struct Reader {
  const json& in;
  void operator()(const char* key, int& v) const { v = static_cast<int>(intOr(in, key, v)); }
  void operator()(const char* key, int64_t& v) const { v = intOr(in, key, v); }
  void operator()(const char* key, double& v) const { v = numberOr(in, key, v); }
  void operator()(const char* key, bool& v) const { v = boolOr(in, key, v); }
  void operator()(const char* key, std::string& v) const { v = stringOr(in, key, v); }
  void operator()(const char* key, json& v) const {  // a free-form part: an object or a list
    const json* j = find(key);
    if (j && ((j->is_object() && !j->empty()) || j->is_array())) v = *j;
  }
  template <class T>
  void operator()(const char* key, std::optional<T>& v) const {
    const json* j = find(key);
    if (!j || !holds<T>(*j)) return;
    T value{};
    (*this)(key, value);
    v = std::move(value);
  }
  template <class T>
  void operator()(const char* key, std::map<std::string, T>& items) const {
    const json& o = objectOr(in, key);
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (!it->is_object()) continue;
      T item{};
      visit(item, Reader{*it});
      items[it.key()] = std::move(item);
    }
  }
  template <class T>
  auto operator()(const char* key, T& v) const -> decltype(visit(v, std::declval<const Reader&>()), void()) {
    visit(v, Reader{objectOr(in, key)});
  }

  const json* find(const char* key) const {
    if (!in.is_object()) return nullptr;
    auto it = in.find(key);
    return it == in.end() ? nullptr : &*it;
  }
};

template <class E>
E readAs(const json& j) {
  E e{};
  visit(e, Reader{j});
  return e;
}

}  // namespace

void writeFields(const StepEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const EvalEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const EpochEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const StartEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const RunEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const WarningEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const ErrorEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const EarlyStopEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const CheckpointEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const EndEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const LadderEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const RungStartEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const RungEndEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const LadderEndEvent& e, json& event) { visit(e, Writer{event}); }
void writeFields(const HostInfo& h, json& object) { visit(h, Writer{object}); }
void writeFields(const SpeedupStatus& s, json& object) { visit(s, Writer{object}); }

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

}  // namespace wb::proto
