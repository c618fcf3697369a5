// tune.json's and batch.json's field lists (wb/proto/tune_record.h): one line a field.
#include "wb/proto/tune_record.h"

#include "wb/proto/fields.h"

namespace wb::proto {
namespace {

WB_FIELDS(TuneDimension) {
  f("key", e.key);
  f("values", e.values);
  f("note", e.note);
  f("searched", e.searched);
}

WB_FIELDS(TuneCandidate) {
  f("id", e.id);
  f("label", e.label);
  f("settings", e.settings);
  f("config", e.config);
}

WB_FIELDS(TuneTrial) {
  f("candidate", e.candidate);
  f("stage", e.stage);
  f("rung", e.rung);
  f("steps", e.steps);
  f("run_dir", e.run_dir);
  f("status", e.status);
  f("train_samples_per_s", e.train_samples_per_s);
  f("eval_images_per_s", e.eval_images_per_s);
  f("epoch_s", e.epoch_s);
  f("peak_mem", e.peak_mem);
  f("run_wall_s", e.run_wall_s);
  f("contended", e.contended);
  f("error", e.error);
}

WB_FIELDS(TuneRung) {
  f("rung", e.rung);
  f("samples", e.samples);
  f("candidates", e.candidates);
  f("promoted", e.promoted);
  f("why", e.why);
}

WB_FIELDS(TuneFinalist) {
  f("candidate", e.candidate);
  f("label", e.label);
  f("dir", e.dir);
  f("method", e.method);
  f("words", e.words);
  f("pairs", e.pairs);
  f("reached", e.reached);
  f("estimate", e.estimate);
  f("vs_best", e.vs_best);
  f("verdict", e.verdict);
}

WB_FIELDS(BatchPoint) {
  f("batch", e.batch);
  f("run_dir", e.run_dir);
  f("status", e.status);
  f("train_samples_per_s", e.train_samples_per_s);
  f("peak_mem", e.peak_mem);
  f("allocation_failed", e.allocation_failed);
  f("error", e.error);
}

WB_FIELDS(TuneBatch) {
  f("base", e.base);
  f("chosen", e.chosen);
  f("devices", e.devices);
  f("margin", e.margin);
  f("memory_free", e.memory_free);
  f("memory_kind", e.memory_kind);
  f("stopped", e.stopped);
  f("lr_rule", e.lr_rule);
  f("lr_note", e.lr_note);
  f("points", e.points);
  f("accuracy", e.accuracy);
  f("config", e.config);
}

WB_FIELDS(TuneRecord) {
  f("answer", e.answer);
  f("status", e.status);
  f("out_dir", e.out_dir);
  f("measured_at", e.measured_at);
  f("command", e.command);
  f("run_command", e.run_command);
  f("left_out", e.left_out);
  f("objective", e.objective);
  f("space", e.space);
  f("candidates", e.candidates);
  f("trials", e.trials);
  f("rungs", e.rungs);
  f("eval_choice", e.eval_choice);
  f("finals", e.finals);
  f("target_acc", e.target_acc);
  f("best", e.best);
  f("best_label", e.best_label);
  f("cannot_tell", e.cannot_tell);
  f("budget_s", e.budget_s);
  f("trials_s", e.trials_s);
  f("finals_s", e.finals_s);
  f("note", e.note);
  f("batch", e.batch);
}

}  // namespace

nlohmann::json toJson(const TuneRecord& r) {
  nlohmann::json j = nlohmann::json::object();
  fieldsToJson(r, j);
  return j;
}

TuneRecord readTuneRecord(const nlohmann::json& j) { return readAs<TuneRecord>(j); }

nlohmann::json toJson(const TuneTrial& t) {
  nlohmann::json j = nlohmann::json::object();
  fieldsToJson(t, j);
  return j;
}

nlohmann::json toJson(const TuneBatch& b) {
  nlohmann::json j = nlohmann::json::object();
  fieldsToJson(b, j);
  return j;
}

TuneBatch readTuneBatch(const nlohmann::json& j) { return readAs<TuneBatch>(j); }

}  // namespace wb::proto
