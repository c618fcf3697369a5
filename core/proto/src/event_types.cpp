#include "wb/proto/event_types.h"

#include "wb/proto/events.h"

namespace wb::proto {
using nlohmann::json;

namespace {

// Each struct's fields, once: visit(e, f) calls f(name, member) in schema order.
template <class E, class F>
void visitStep(E& e, F&& f) {
  f("epoch", e.epoch);
  f("step", e.step);
  f("samples", e.samples);
  f("loss", e.loss);
  f("lr", e.lr);
  f("samples_per_s", e.samples_per_s);
  f("step_ms", e.step_ms);
  f("mem", e.mem);
  f("cpu", e.cpu);
  f("comm", e.comm);
  f("amp", e.amp);
  f("progress", e.progress);
  f("eta_s", e.eta_s);
}

template <class E, class F>
void visitPhases(E& p, F&& f) {
  f("data", p.data);
  f("h2d", p.h2d);
  f("fwd", p.fwd);
  f("bwd", p.bwd);
  f("comm", p.comm);
  f("opt", p.opt);
}

template <class E, class F>
void visitEval(E& e, F&& f) {
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

template <class E, class F>
void visitEpoch(E& e, F&& f) {
  f("epoch", e.epoch);
  f("seconds", e.seconds);
  f("train_seconds", e.train_seconds);
  f("samples", e.samples);
  f("train_samples_per_s", e.train_samples_per_s);
  f("samples_per_s", e.samples_per_s);
  f("train_loss", e.train_loss);
  f("complete", e.complete);
}

struct Writer {
  json& out;
  template <class T>
  void operator()(const char* key, const T& v) const {
    out[key] = v;
  }
  void operator()(const char* key, const json& v) const {
    if (!v.is_null()) out[key] = v;  // an absent part stays absent
  }
};

struct Reader {
  const json& in;
  void operator()(const char* key, int& v) const { v = static_cast<int>(intOr(in, key, v)); }
  void operator()(const char* key, int64_t& v) const { v = intOr(in, key, v); }
  void operator()(const char* key, double& v) const { v = numberOr(in, key, v); }
  void operator()(const char* key, bool& v) const { v = boolOr(in, key, v); }
  void operator()(const char* key, json& v) const {
    const json& o = objectOr(in, key);
    if (!o.empty()) v = o;
  }
};

}  // namespace

void writeFields(const StepEvent& e, json& event) {
  visitStep(e, Writer{event});
  if (e.ms) {
    json ms = json::object();
    visitPhases(*e.ms, Writer{ms});
    event["ms"] = ms;
  }
}
void writeFields(const EvalEvent& e, json& event) { visitEval(e, Writer{event}); }
void writeFields(const EpochEvent& e, json& event) { visitEpoch(e, Writer{event}); }

StepEvent readStepEvent(const json& event) {
  StepEvent e;
  visitStep(e, Reader{event});
  if (const json& ms = objectOr(event, "ms"); !ms.empty()) {
    StepPhases p;
    visitPhases(p, Reader{ms});
    e.ms = p;
  }
  return e;
}

EvalEvent readEvalEvent(const json& event) {
  EvalEvent e;
  visitEval(e, Reader{event});
  return e;
}

EpochEvent readEpochEvent(const json& event) {
  EpochEvent e;
  visitEpoch(e, Reader{event});
  return e;
}

}  // namespace wb::proto
