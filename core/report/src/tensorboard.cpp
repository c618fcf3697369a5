#include "wb/report/tensorboard.h"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "tfevents.pb.h"
#include "wb/common/config_schema.h"
#include "wb/common/fs.h"
#include "wb/common/speedups.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/records/run_record.h"
#include "wb/report/run_names.h"

namespace wb::report {

namespace tb = wb::tensorboard;
using nlohmann::json;

// ---- TFRecord framing -----------------------------------------------------------------------

namespace {

std::array<uint32_t, 256> crc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
    table[i] = c;
  }
  return table;
}

void putLittleEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = crc32cTable();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t maskedCrc32c(const void* data, size_t size) {
  const uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

std::string tfRecord(const std::string& payload) {
  std::string out;
  std::string length;
  putLittleEndian(length, payload.size(), 8);
  out += length;
  putLittleEndian(out, maskedCrc32c(length.data(), length.size()), 4);
  out += payload;
  putLittleEndian(out, maskedCrc32c(payload.data(), payload.size()), 4);
  return out;
}

// ---- one run as events ----------------------------------------------------------------------

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Appends Events as TFRecords, counting the scalars.
struct EventFile {
  std::string bytes;
  int64_t scalars = 0;

  void add(const tb::Event& event) {
    for (const auto& v : event.summary().value())
      if (v.value_case() == tb::Summary::Value::kSimpleValue) ++scalars;
    bytes += tfRecord(event.SerializeAsString());
  }
};

void addScalar(tb::Summary& s, const std::string& tag, double value) {
  if (!std::isfinite(value)) return;  // absent (NaN) or a non-finite loss: no point
  auto* v = s.add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
}
void addScalar(tb::Summary& s, const std::string& tag, const std::optional<int64_t>& bytes) {
  if (bytes) addScalar(s, tag, double(*bytes) / kMiB);
}
// Figures whose 0 means "the writer gave none" (a throughput, a step time).
void addPositive(tb::Summary& s, const std::string& tag, double value) {
  if (value > 0) addScalar(s, tag, value);
}

// The step event's figures: loss, learning rate, throughput, the step-time split, memory.
void stepScalars(const proto::StepEvent& e, tb::Summary& s) {
  addScalar(s, "loss/train", e.loss);
  addScalar(s, "learning_rate", e.lr);
  addPositive(s, "throughput/train_samples_per_s", e.samples_per_s);
  addPositive(s, "step_time_ms/step", e.step_ms);
  if (e.ms) {
    const auto& ms = *e.ms;
    for (const auto& [name, value] : {std::pair{"data", ms.data}, {"h2d", ms.h2d}, {"fwd", ms.fwd}, {"bwd", ms.bwd},
                                      {"opt", ms.opt}, {"comm", ms.comm}})
      addScalar(s, std::string("step_time_ms/") + name, value);
    if (ms.other) addScalar(s, "step_time_ms/other", *ms.other);
  }
  if (e.mem) {
    addScalar(s, "memory_MiB/alloc", e.mem->alloc);
    addScalar(s, "memory_MiB/reserved", e.mem->reserved);
    addScalar(s, "memory_MiB/peak", e.mem->peak);
    addScalar(s, "memory_MiB/rss", e.mem->rss);
    addScalar(s, "memory_MiB/rss_peak", e.mem->rss_peak);
  }
}

void evalScalars(const proto::EvalEvent& e, tb::Summary& s) {
  addScalar(s, "loss/val", e.val_loss);
  addScalar(s, "accuracy/val", e.val_acc);
  addPositive(s, "eval_time_ms", e.eval_ms);
}

void epochScalars(const proto::EpochEvent& e, tb::Summary& s) {
  addScalar(s, "loss/epoch_train", e.train_loss);
  addPositive(s, "throughput/epoch_train_samples_per_s", e.train_samples_per_s > 0 ? e.train_samples_per_s : e.samples_per_s);
  addPositive(s, "epoch_time_s", e.seconds);
}

// A text summary (the text plugin: a rank-0 string tensor, Markdown).
void addText(tb::Summary& s, const std::string& tag, const std::string& markdown) {
  auto* v = s.add_value();
  v->set_tag(tag);
  auto* meta = v->mutable_metadata();
  meta->mutable_plugin_data()->set_plugin_name("text");
  meta->mutable_plugin_data()->set_content(tb::TextPluginData().SerializeAsString());
  meta->set_data_class(tb::DATA_CLASS_TENSOR);
  auto* tensor = v->mutable_tensor();
  tensor->set_dtype(tb::DT_STRING);
  tensor->mutable_tensor_shape();
  tensor->add_string_val(markdown);
}

// The HParams plugin's record: its data in the metadata, a float 0 as the tensor.
void addHParams(tb::Summary& s, const std::string& tag, const tb::HParamsPluginData& data) {
  auto* v = s.add_value();
  v->set_tag(tag);
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("hparams");
  v->mutable_metadata()->mutable_plugin_data()->set_content(data.SerializeAsString());
  auto* tensor = v->mutable_tensor();
  tensor->set_dtype(tb::DT_FLOAT);
  tensor->mutable_tensor_shape();
  tensor->add_float_val(0.0f);
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (!j.is_object()) {
    out.emplace_back(prefix, j);
    return;
  }
  for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
}

// The speedups the run asked for, by their run names ("workers 2", "+ bf16"), in the table's order.
std::vector<std::string> speedupsAskedFor(const records::RunRecord& run) {
  std::vector<std::string> names;
  for (const Speedup& s : speedupTable()) {
    const auto it = run.start.speedups.find(s.key);
    if (it == run.start.speedups.end() || !it->second.requested) continue;
    const json& value = run.configAt(s.config_path);
    names.push_back(value.is_null() ? std::string(s.label) : changeName(s.config_path, value));
  }
  return names;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The speedups as a Markdown table, the decision first.
std::string speedupsText(const records::RunRecord& run) {
  const auto asked = speedupsAskedFor(run);
  std::string md = asked.empty() ? "Speedups asked for: none (a baseline)\n\n" : "Speedups asked for: " + joined(asked) + "\n\n";
  md += "| Speedup | Setting | Asked for | In effect |\n|---|---|---|---|\n";
  for (const Speedup& s : speedupTable()) {
    const auto it = run.start.speedups.find(s.key);
    const json& value = run.configAt(s.config_path);
    const std::string setting = value.is_null() ? "—" : changeName(s.config_path, value);
    const bool known = it != run.start.speedups.end();
    md += std::string("| ") + s.label + " | " + setting + " | " + (known ? (it->second.requested ? "yes" : "no") : "—") +
          " | " + (known ? (it->second.active ? "yes" : "no") : "—") + " |\n";
  }
  return md;
}

// The config as hyperparameters: each scalar field by its label (its dotted path where it has no
// label or the label is taken), and "Speedups" naming the ones asked for.
tb::HParamsPluginData sessionStart(const records::RunRecord& run, double startWall) {
  tb::HParamsPluginData data;
  auto* start = data.mutable_session_start_info();
  start->set_start_time_secs(startWall);
  start->set_model_uri(run.dir);
  auto& hparams = *start->mutable_hparams();
  const auto asked = speedupsAskedFor(run);
  hparams["Speedups"].set_string_value(asked.empty() ? "none" : joined(asked));
  std::vector<std::pair<std::string, json>> fields;
  flatten(run.config, "", fields);
  for (const auto& [path, value] : fields) {
    const FieldSpec* spec = findFieldSpec(path);
    std::string name = spec ? spec->label : path;
    if (hparams.count(name)) name = path;
    google::protobuf::Value v;
    if (value.is_boolean()) v.set_bool_value(value.get<bool>());
    else if (value.is_number()) v.set_number_value(value.get<double>());
    else if (value.is_string()) v.set_string_value(value.get<std::string>());
    else continue;  // null, lists: not a hyperparameter TensorBoard can filter on
    hparams[name] = v;
  }
  return data;
}

tb::Status sessionStatus(const std::string& status) {
  if (status == "ok" || status == "early-stopped") return tb::STATUS_SUCCESS;
  if (status == "running") return tb::STATUS_RUNNING;
  return tb::STATUS_FAILURE;  // failed | cancelled | diverged
}

// Markdown shows a block indented by four spaces as it is.
std::string codeBlock(const std::string& text) {
  std::string out = "    ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

std::string safeName(std::string s) {
  for (char& c : s)
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 32) c = '_';
  return s.empty() || s == "." || s == ".." ? "run" : s;
}

}  // namespace

namespace {

struct RunEvents {
  std::string bytes;
  int64_t scalars = 0;
  double start_wall = 0;
  std::string host;
};

Result<RunEvents> encodeRun(const std::string& run_dir) {
  auto loaded = records::loadRun(run_dir);
  if (!loaded.ok()) return loaded.error();
  const records::RunRecord& run = loaded.value();
  const auto events = proto::readEventsFile(proto::RunDir{run_dir}.events().string());
  // Each point's time: the event's unix seconds (its t after the first known one where a writer left them out).
  double offset = std::numeric_limits<double>::quiet_NaN();
  for (const auto& ev : events) {
    const auto env = proto::readEnvelope(ev);
    if (std::isfinite(env.wall)) {
      offset = env.wall - env.t;
      break;
    }
  }
  if (!std::isfinite(offset)) offset = 0;
  const auto wallOf = [&](const proto::Envelope& env) { return std::isfinite(env.wall) ? env.wall : offset + env.t; };

  RunEvents out;
  out.start_wall = events.empty() ? offset : wallOf(proto::readEnvelope(events.front()));
  out.host = run.start.host.name;
  EventFile file;
  tb::Event first;
  first.set_wall_time(out.start_wall);
  first.set_file_version(kTensorBoardFileVersion);
  file.add(first);

  tb::Event about;
  about.set_wall_time(out.start_wall);
  addText(*about.mutable_summary(), "config", codeBlock(run.config.dump(2)));
  addText(*about.mutable_summary(), "speedups", speedupsText(run));
  addHParams(*about.mutable_summary(), "_hparams_/session_start_info", sessionStart(run, out.start_wall));
  file.add(about);

  int64_t lastStep = 0;
  double lastWall = out.start_wall;
  for (const auto& ev : events) {
    const auto env = proto::readEnvelope(ev);
    if (env.rank.value_or(0) != 0) continue;  // rank 0's figures, as the report's curves
    tb::Event event;
    event.set_wall_time(wallOf(env));
    lastWall = std::max(lastWall, event.wall_time());
    if (env.type == proto::StepEvent::kType) {
      const auto step = proto::readStepEvent(ev);
      lastStep = step.step;
      stepScalars(step, *event.mutable_summary());
    } else if (env.type == proto::EvalEvent::kType) {
      const auto eval = proto::readEvalEvent(ev);
      lastStep = eval.step;
      evalScalars(eval, *event.mutable_summary());
    } else if (env.type == proto::EpochEvent::kType) {
      epochScalars(proto::readEpochEvent(ev), *event.mutable_summary());  // at the last step before it
    } else {
      continue;
    }
    event.set_step(lastStep);
    if (event.summary().value_size() > 0) file.add(event);
  }
  if (run.finished) {
    tb::HParamsPluginData end;
    end.mutable_session_end_info()->set_status(sessionStatus(run.status));
    end.mutable_session_end_info()->set_end_time_secs(lastWall);
    tb::Event last;
    last.set_wall_time(lastWall);
    last.set_step(lastStep);
    addHParams(*last.mutable_summary(), "_hparams_/session_end_info", end);
    file.add(last);
  }
  out.bytes = std::move(file.bytes);
  out.scalars = file.scalars;
  return out;
}

bool holdsEventFiles(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().filename().string().find("tfevents") != std::string::npos) return true;
  return false;
}

}  // namespace

Result<std::string> tensorBoardEvents(const std::string& run_dir, int64_t* scalars) {
  auto run = encodeRun(run_dir);
  if (!run.ok()) return run.error();
  if (scalars) *scalars = run->scalars;
  return std::move(run->bytes);
}

Result<std::vector<TensorBoardRun>> writeTensorBoard(const std::vector<std::string>& run_dirs,
                                                     const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out.empty()) return makeError(Errc::Io, "no output folder given (pass --output <folder>)");
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    return makeError(Errc::Io, out.string() + " is a file: TensorBoard reads a folder, give --output a folder");
  // Every run is encoded and every target checked before anything is written.
  std::vector<TensorBoardRun> runs;
  std::vector<std::string> bytes;
  std::map<std::string, int> used;
  for (const auto& dir : run_dirs) {
    auto encoded = encodeRun(dir);
    if (!encoded.ok()) return encoded.error();
    fs::path path = fs::absolute(dir, ec).lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "runs/a/"
    std::string name = safeName(path.filename().string());
    if (const int n = ++used[name]; n > 1) name += "-" + std::to_string(n);
    const fs::path folder = out / name;
    if (holdsEventFiles(folder))
      return makeError(Errc::Io, folder.string() + " already holds TensorBoard event files: export to another folder, "
                                                   "or move them away (nothing was written)");
    const std::string host = safeName(encoded->host.empty() ? std::string("localhost") : encoded->host);
    const auto stamp = static_cast<long long>(std::floor(encoded->start_wall));
    runs.push_back({dir, folder / ("events.out.tfevents." + std::to_string(stamp) + "." + host + ".workbench"), name,
                    encoded->scalars});
    bytes.push_back(std::move(encoded->bytes));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    fs::create_directories(runs[i].file.parent_path(), ec);
    if (ec) return makeError(Errc::Io, "cannot make " + runs[i].file.parent_path().string() + ": " + ec.message());
    if (auto st = writeFileAtomic(runs[i].file, bytes[i]); !st.ok()) return st.error();
  }
  return runs;
}

}  // namespace wb::report
