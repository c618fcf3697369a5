#include "wb/proto/capabilities_record.h"

#include "wb/proto/capability_keys.h"
#include "wb/proto/fields.h"

namespace wb::proto {
using nlohmann::json;

WB_FIELDS(ValueCapability) { f("available", e.available), f("note", e.note), f("native", e.native); }

WB_FIELDS(SpeedupCapability) {
  f("available", e.available), f("note", e.note), f("max", e.max), f("default", e.suggested);
  f("kind", e.kind), f("values", e.values), f("probe", e.probe);
}

WB_FIELDS(Capabilities) {
  namespace k = caps;
  f(k::kVersion, e.version), f(k::kLibtorch, e.libtorch), f(k::kOpencv, e.opencv);
  f(k::kCuda, e.cuda), f(k::kCudaVersion, e.cuda_version), f(k::kCudnn, e.cudnn);
  f(k::kGpus, e.gpus), f(k::kGpuNames, e.gpu_names), f(k::kCores, e.cores);
  f(k::kNccl, e.nccl), f(k::kGloo, e.gloo), f(k::kModels, e.models);
  f(k::kPeak, e.peak), f(k::kSpeedups, e.speedups);
}

const SpeedupCapability* Capabilities::speedup(const std::string& key) const {
  auto it = speedups.find(key);
  return it == speedups.end() ? nullptr : &it->second;
}

const ValueCapability* Capabilities::value(const std::string& key, const std::string& value) const {
  const SpeedupCapability* s = speedup(key);
  if (!s) return nullptr;
  auto it = s->values.find(value);
  return it == s->values.end() ? nullptr : &it->second;
}

bool Capabilities::available(const std::string& key, bool fallback) const {
  const SpeedupCapability* s = speedup(key);
  return s ? s->available : fallback;
}

std::string Capabilities::note(const std::string& key, const std::string& fallback) const {
  const SpeedupCapability* s = speedup(key);
  return s && !s->note.empty() ? s->note : fallback;
}

json capabilitiesToJson(const Capabilities& c) {
  json j = json::object();
  fieldsToJson(c, j);
  return j;
}

Capabilities capabilitiesFromJson(const json& doc) {
  Capabilities c;
  if (!doc.is_object() || doc.empty()) return c;
  fieldsFromJson(doc, c);
  c.known = true;
  return c;
}

}  // namespace wb::proto
