// summary.json's field list: one line a field (the keys on disk; a rename breaks old run folders
// and tests/core/proto/test_run_summary.cpp's list of them).
#include "wb/proto/run_summary.h"

#include "wb/proto/fields.h"
#include "wb/proto/schema.h"

namespace wb::proto {
using nlohmann::json;

namespace {

WB_FIELDS(ProcessLoad) {
  f("pid", e.pid);
  f("name", e.name);
  f("cores", e.cores);
}

WB_FIELDS(RunCpu) {
  f("cores", e.cores);
  f("asked_cores", e.asked_cores);
  f("used_cores", e.used_cores);
  f("other_load_cores", e.other_load_cores);
  f("contended", e.contended);
  f("shared_cores", e.shared_cores);
  f("shared", e.shared);
  f("oversubscribed", e.oversubscribed);
  f("note", e.note);
  f("busiest_others", e.busiest_others);
  f("threads", e.threads);
  f("min_threads", e.min_threads);
  f("process_cores", e.process_cores);
  f("machine_busy_cores", e.machine_busy_cores);
  f("other_cores", e.other_cores);
}

WB_FIELDS(HostSpeedCheck) {
  f("before_ms", e.before_ms);
  f("after_ms", e.after_ms);
  f("kernel", e.kernel);
}

WB_FIELDS(RunSummary) {
  f("status", e.status);
  f("run_id", e.run_id);
  f("name", e.name);
  f("run_dir", e.run_dir);
  f("error", e.error);
  f("message", e.message);
  f("failed_rank", e.failed_rank);
  f("log_tail", e.log_tail);
  f("training_status", e.training_status);
  f("events_lost", e.events_lost);
  f("events_late", e.events_late);
  f("events_error", e.events_error);
  f("failed_rank_stalled", e.failed_rank_stalled);
  f("fine_tuned_from", e.fine_tuned_from);
  f("device", e.device);
  f("world_size", e.world_size);
  f("epochs", e.epochs);
  f("steps", e.steps);
  f("optimizer_steps", e.optimizer_steps);
  f("samples", e.samples);
  f("wall_s", e.wall_s);
  f("train_samples", e.train_samples);
  f("train_s", e.train_s);
  f("train_samples_per_s", e.train_samples_per_s);
  f("eval_s", e.eval_s);
  f("checkpoint_s", e.checkpoint_s);
  f("time_to_first_step_s", e.time_to_first_step_s);
  f("first_step_unix", e.first_step_unix);
  f("run_wall_s", e.run_wall_s);
  f("launcher_wall_s", e.launcher_wall_s);
  f("cpu", e.cpu);
  f("host_speed", e.host_speed);
  f("best_val_acc", e.best_val_acc);
  f("final_val_acc", e.final_val_acc);
  f("best_val_loss", e.best_val_loss);
  f("peak_mem", e.peak_mem);
  f("amp_skipped", e.amp_skipped);
  f("best_epoch", e.best_epoch);
  f("best_value", e.best_value);
  f("best_weights_restored", e.best_weights_restored);
  f("best_weights_note", e.best_weights_note);
  f("target_val_acc", e.target_val_acc);
  f("samples_to_target", e.samples_to_target);
  f("steps_to_target", e.steps_to_target);
  f("checkpoints_late", e.checkpoints_late);
  f("flops", e.flops);
}

}  // namespace

json toJson(const RunSummary& summary) {
  json out = json::object();
  fieldsToJson(summary, out);
  return out;
}

json toJson(const RunCpu& cpu) {
  json out = json::object();
  fieldsToJson(cpu, out);
  return out;
}

json toJson(const std::vector<ProcessLoad>& loads) {
  json out = json::object();
  Writer{out}("list", loads);  // an empty list too: none is an answer
  return out["list"];
}

std::vector<ProcessLoad> readProcessLoads(const json& list) {
  std::vector<ProcessLoad> loads;
  const json holder{{"list", list}};
  Reader{holder}("list", loads);
  return loads;
}

RunSummary readRunSummary(const json& summary) { return readAs<RunSummary>(summary); }

json summaryFieldLists() {
  return {{"summary", fieldKinds<RunSummary>()},
          {"summary.cpu", fieldKinds<RunCpu>()},
          {"summary.host_speed", fieldKinds<HostSpeedCheck>()}};
}

}  // namespace wb::proto
