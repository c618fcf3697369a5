#include "wb/train/checkpoint.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "wb/common/fs.h"
#include "zip_check.h"

// Layout: one torch::serialize archive (a zip, as torch::save writes) holding plain IValues
// under flat keys. Tensor names go in a separate list because archive keys cannot contain
// '.', and parameter names ("conv1.weight") do. The optimiser state is nested as its own
// archive's bytes in a uint8 tensor, so it round-trips byte for byte.

namespace wb::train {
namespace {

constexpr const char* kMagic = "speedup-workbench-checkpoint";
constexpr int kFormatVersion = 1;

std::string advice() {
  return "resume from best.pt instead (run --resume RUN_DIR --from best), or start the run afresh";
}

Error checkpointError(const std::string& path, const std::string& what) {
  return makeError(Errc::Checkpoint, "checkpoint " + path + " " + what + ": " + advice());
}

torch::Tensor bytesToTensor(const std::string& bytes) {
  auto t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

std::string tensorToBytes(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU, torch::kUInt8).contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()));
}

void writeNamed(torch::serialize::OutputArchive& out, const std::string& key,
                const model::NamedTensors& tensors) {
  c10::List<std::string> names;
  c10::List<at::Tensor> values;
  for (const auto& [name, t] : tensors) {
    names.push_back(name);
    values.push_back(t.detach());
  }
  out.write(key + "_names", names);
  out.write(key + "_values", values);
}

void writeMap(torch::serialize::OutputArchive& out, const std::string& key,
              const std::map<std::string, double>& map) {
  c10::Dict<std::string, double> dict;
  for (const auto& [k, v] : map) dict.insert(k, v);
  out.write(key, dict);
}

// Reading: a missing key or a value of the wrong type is a std::runtime_error with the key
// named; loadCheckpoint turns it (and c10::Error from the zip reader) into one Error.
struct Reader {
  torch::serialize::InputArchive& in;

  c10::IValue get(const std::string& key) {
    c10::IValue v;
    if (!in.try_read(key, v)) throw std::runtime_error("has no field '" + key + "'");
    return v;
  }
  int64_t integer(const std::string& key) { return get(key).toInt(); }
  std::string string(const std::string& key) { return get(key).toStringRef(); }

  model::NamedTensors named(const std::string& key) {
    auto names = get(key + "_names").toList();
    auto values = get(key + "_values").toTensorList();
    if (names.size() != values.size())
      throw std::runtime_error("field '" + key + "' has " + std::to_string(names.size()) +
                               " names but " + std::to_string(values.size()) + " tensors");
    model::NamedTensors out;
    for (size_t i = 0; i < names.size(); ++i)
      out.emplace_back(names.get(i).toStringRef(), values.get(i));
    return out;
  }

  std::map<std::string, double> map(const std::string& key) {
    std::map<std::string, double> out;
    for (const auto& entry : get(key).toGenericDict())
      out[entry.key().toStringRef()] = entry.value().toDouble();
    return out;
  }
};

CheckpointData decode(torch::serialize::InputArchive& in) {
  Reader r{in};
  c10::IValue magic;
  if (!in.try_read("wb_magic", magic) || !magic.isString() || magic.toStringRef() != kMagic)
    throw std::invalid_argument("is a torch archive but not a Speedup Workbench checkpoint");
  CheckpointData d;
  d.format_version = static_cast<int>(r.integer("format_version"));
  if (d.format_version > kFormatVersion)
    throw std::invalid_argument("has format version " + std::to_string(d.format_version) +
                                " but this build reads up to " + std::to_string(kFormatVersion) +
                                " (open it with the newer build that wrote it)");
  d.config_json = r.string("config_json");
  d.epoch = static_cast<int>(r.integer("epoch"));
  d.batch_in_epoch = r.integer("batch_in_epoch");
  d.global_step = r.integer("global_step");
  d.samples_seen = r.integer("samples_seen");
  d.params = r.named("params");
  d.buffers = r.named("buffers");
  d.optimizer_state = tensorToBytes(r.get("optimizer_state").toTensor());
  d.scaler = r.map("scaler");
  d.early_stopping = r.map("early_stopping");
  d.extra = r.map("extra");
  c10::IValue rng;
  if (in.try_read("rng_state", rng)) d.rng_state = rng.toTensor();
  return d;
}

}  // namespace

Status saveCheckpoint(const std::string& path, const CheckpointData& data) {
  std::ostringstream bytes;
  try {
    torch::serialize::OutputArchive out;
    out.write("wb_magic", std::string(kMagic));
    out.write("format_version", static_cast<int64_t>(kFormatVersion));
    out.write("config_json", data.config_json);
    out.write("epoch", static_cast<int64_t>(data.epoch));
    out.write("batch_in_epoch", data.batch_in_epoch);
    out.write("global_step", data.global_step);
    out.write("samples_seen", data.samples_seen);
    writeNamed(out, "params", data.params);
    writeNamed(out, "buffers", data.buffers);
    out.write("optimizer_state", c10::IValue(bytesToTensor(data.optimizer_state)));
    writeMap(out, "scaler", data.scaler);
    writeMap(out, "early_stopping", data.early_stopping);
    writeMap(out, "extra", data.extra);
    if (data.rng_state.defined()) out.write("rng_state", c10::IValue(data.rng_state.detach()));
    out.save_to(bytes);
  } catch (const c10::Error& e) {
    return makeError(Errc::Checkpoint, "cannot serialise checkpoint " + path + ": " +
                                           e.what_without_backtrace());
  }
  // Serialised in memory first so the file appears under its name only complete and synced.
  auto st = writeFileAtomic(path, bytes.str());
  if (st.ok()) removeStaleTemporaries(std::filesystem::path(path).parent_path().string());
  return st;
}

Result<CheckpointData> loadCheckpoint(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return makeError(Errc::Checkpoint, "checkpoint " + path +
                                           " does not exist: check the run directory, or start "
                                           "the run afresh without --resume");
  auto bytes = readFile(path);
  if (!bytes) return makeError(Errc::Checkpoint, "checkpoint " + bytes.error().message);
  if (bytes->empty()) return checkpointError(path, "is empty (a write was cut short?)");
  if (auto problem = detail::zipIntegrityProblem(*bytes))
    return checkpointError(path, "is truncated or corrupt (" + *problem + ")");
  try {
    torch::serialize::InputArchive in;
    in.load_from(bytes->data(), bytes->size(), torch::Device(torch::kCPU));
    return decode(in);
  } catch (const c10::Error& e) {
    return checkpointError(path, std::string("is truncated or corrupt (") +
                                     e.what_without_backtrace() + ")");
  } catch (const std::invalid_argument& e) {
    return checkpointError(path, e.what());
  } catch (const std::exception& e) {
    return checkpointError(path, std::string("is incomplete: it ") + e.what());
  }
}

namespace {
// The writer pid of "<name>.tmp-<pid>" (writeFileAtomic's temp name), or 0.
pid_t temporaryWriter(const std::string& filename) {
  const auto at = filename.rfind(".tmp-");
  if (at == std::string::npos || at + 5 == filename.size()) return 0;
  const std::string digits = filename.substr(at + 5);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}
}  // namespace

int removeStaleTemporaries(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const pid_t writer = temporaryWriter(it->path().filename().string());
    if (writer <= 0 || !it->is_regular_file(ec)) continue;
    if (::kill(writer, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    if (std::filesystem::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

std::string optimizerStateBytes(torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive out;
  optimizer.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  return bytes.str();
}

Status loadOptimizerStateBytes(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  try {
    torch::serialize::InputArchive in;
    in.load_from(bytes.data(), bytes.size());
    optimizer.load(in);
  } catch (const c10::Error& e) {
    return makeError(Errc::Checkpoint,
                     std::string("optimiser state cannot be restored (") +
                         e.what_without_backtrace() +
                         "): the checkpoint must come from a run with the same model and "
                         "optimiser settings; start the run afresh otherwise");
  }
  return {};
}

}  // namespace wb::train
