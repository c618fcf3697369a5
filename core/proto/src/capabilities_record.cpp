#include "wb/proto/capabilities_record.h"

#include "wb/proto/capability_keys.h"

namespace wb::proto {
using nlohmann::json;

namespace {

template <class T>
void read(const json& doc, const char* key, T& into) {
  if (!doc.is_object()) return;
  auto it = doc.find(key);
  if (it == doc.end()) return;
  try {
    into = it->get<T>();
  } catch (const json::exception&) {  // another type: the default stands
  }
}

// An optional field: set only when the document holds it with the right type.
void readOptional(const json& doc, const char* key, std::optional<int>& into) {
  if (doc.is_object() && doc.contains(key) && doc[key].is_number_integer()) into = doc[key].get<int>();
}
void readOptional(const json& doc, const char* key, std::optional<bool>& into) {
  if (doc.is_object() && doc.contains(key) && doc[key].is_boolean()) into = doc[key].get<bool>();
}

json valueJson(const ValueCapability& v) {
  json j = {{"available", v.available}, {"note", v.note}};
  if (v.native) j["native"] = *v.native;
  return j;
}

json speedupJson(const SpeedupCapability& s) {
  json j = {{"available", s.available}, {"note", s.note}};
  if (s.max) j["max"] = *s.max;
  if (s.suggested) j["default"] = *s.suggested;
  if (!s.kind.empty()) j["kind"] = s.kind;
  if (!s.values.empty()) {
    json values = json::object();
    for (const auto& [name, v] : s.values) values[name] = valueJson(v);
    j["values"] = values;
  }
  if (!s.probe.is_null()) j["probe"] = s.probe;
  return j;
}

ValueCapability valueFrom(const json& j) {
  ValueCapability v;
  read(j, "available", v.available);
  read(j, "note", v.note);
  readOptional(j, "native", v.native);
  return v;
}

SpeedupCapability speedupFrom(const json& j) {
  SpeedupCapability s;
  read(j, "available", s.available);
  read(j, "note", s.note);
  readOptional(j, "max", s.max);
  readOptional(j, "default", s.suggested);
  read(j, "kind", s.kind);
  if (j.is_object() && j.contains("values") && j["values"].is_object())
    for (const auto& [name, v] : j["values"].items()) s.values[name] = valueFrom(v);
  if (j.is_object() && j.contains("probe") && j["probe"].is_object()) s.probe = j["probe"];
  return s;
}

}  // namespace

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
  namespace k = caps;
  json j = {{k::kLibtorch, c.libtorch}, {k::kCuda, c.cuda},   {k::kCudaVersion, c.cuda_version},
            {k::kCudnn, c.cudnn},       {k::kGpus, c.gpus},   {k::kGpuNames, c.gpu_names},
            {k::kCores, c.cores},       {k::kNccl, c.nccl},   {k::kGloo, c.gloo},
            {k::kModels, c.models}};
  if (!c.version.empty()) j[k::kVersion] = c.version;
  if (!c.opencv.empty()) j[k::kOpencv] = c.opencv;
  if (!c.peak.is_null()) j[k::kPeak] = c.peak;
  json s = json::object();
  for (const auto& [key, sp] : c.speedups) s[key] = speedupJson(sp);
  j[k::kSpeedups] = s;
  return j;
}

Capabilities capabilitiesFromJson(const json& doc) {
  namespace k = caps;
  Capabilities c;
  if (!doc.is_object() || doc.empty()) return c;
  c.known = true;
  read(doc, k::kVersion, c.version);
  read(doc, k::kLibtorch, c.libtorch);
  read(doc, k::kOpencv, c.opencv);
  read(doc, k::kCudaVersion, c.cuda_version);
  read(doc, k::kCudnn, c.cudnn);
  read(doc, k::kCuda, c.cuda);
  read(doc, k::kNccl, c.nccl);
  read(doc, k::kGloo, c.gloo);
  read(doc, k::kGpus, c.gpus);
  read(doc, k::kCores, c.cores);
  read(doc, k::kGpuNames, c.gpu_names);
  read(doc, k::kModels, c.models);
  if (doc.contains(k::kPeak)) c.peak = doc[k::kPeak];
  if (doc.contains(k::kSpeedups) && doc[k::kSpeedups].is_object())
    for (const auto& [key, s] : doc[k::kSpeedups].items()) c.speedups[key] = speedupFrom(s);
  return c;
}

}  // namespace wb::proto
