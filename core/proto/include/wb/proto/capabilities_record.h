#pragma once
// `workbench-cli capabilities --json`, typed: what this machine can do, and each speedup's
// availability and why. One writer (core/train's capabilitiesJson, plus the CLI's version, OpenCV
// and peak calibration); the readers (the ladder's plan, the window's speedups panel) parse the
// document once with capabilitiesFromJson instead of reading raw keys; one field list
// (wb/proto/fields.h) drives both. A field the document lacks keeps its default; unknown fields
// are ignored (an older or newer workbench-cli).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::proto {

// One value of a choice speedup (precision's "bf16-mixed").
struct ValueCapability {
  bool available = true;
  std::string note;
  std::optional<bool> native;  // bf16-mixed: false when the CPU emulates it (slower than fp32)
};

struct SpeedupCapability {
  bool available = true;
  std::string note;                              // why not, or what it does here
  std::optional<int> max;                        // counts (workers, devices): the most this machine takes
  std::optional<int> suggested;                  // workers: the count to start from ("default")
  std::string kind;                              // devices: "gpus" or "cpu-processes"
  std::map<std::string, ValueCapability> values; // choice speedups: each value's own availability
  nlohmann::json probe;                          // workers: the stored probe (wb/advice/workers_advice.h), or null
};

struct Capabilities {
  std::string version, libtorch, opencv, cuda_version, cudnn;
  bool cuda = false, nccl = false, gloo = true;
  int gpus = 0, cores = 1;
  std::vector<std::string> gpu_names, models;
  std::map<std::string, SpeedupCapability> speedups;  // by wb/common/speedups.h key
  nlohmann::json peak;                                // wb/records/peak_store.h's, or null
  bool known = false;  // read from a document (false: nothing was said; every default stands)

  // The speedup's entry, or nullptr when the document did not mention it.
  const SpeedupCapability* speedup(const std::string& key) const;
  // One value of a choice speedup ("precision", "bf16-mixed"), or nullptr when not mentioned.
  const ValueCapability* value(const std::string& key, const std::string& value) const;
  // Its availability; `fallback` when not mentioned.
  bool available(const std::string& key, bool fallback = true) const;
  // Its note, or `fallback` when it has none.
  std::string note(const std::string& key, const std::string& fallback = {}) const;
};

nlohmann::json capabilitiesToJson(const Capabilities& c);
Capabilities capabilitiesFromJson(const nlohmann::json& doc);

}  // namespace wb::proto
