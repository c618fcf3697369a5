#include "wb/report/group_names.h"

#include <set>
#include <string>

namespace wb::report {
using nlohmann::json;

namespace {

// Into `out` (the reference's value of this field): each field the runs all hold alike. False
// when they held nothing alike here (and `out` is left as it was).
bool shareInto(const std::vector<const json*>& values, json& out) {
  bool objects = true;
  for (const json* v : values) objects = objects && v && v->is_object();
  if (!objects) {
    for (const json* v : values)
      if (!v || *v != *values.front()) return false;  // they differ here: the reference's value stays
    out = *values.front();
    return true;
  }
  std::set<std::string> keys;
  for (const json* v : values)
    for (auto it = v->begin(); it != v->end(); ++it) keys.insert(it.key());
  bool any = false;
  for (const std::string& key : keys) {
    std::vector<const json*> children;
    for (const json* v : values) children.push_back(v->contains(key) ? &(*v)[key] : nullptr);
    json child = out.is_object() && out.contains(key) ? out[key] : json();
    if (!shareInto(children, child)) continue;
    if (!out.is_object()) out = json::object();
    out[key] = std::move(child);
    any = true;
  }
  return any;
}

}  // namespace

json sharedReference(const std::vector<json>& runs, const json& reference) {
  if (runs.size() < 2) return reference;
  std::vector<const json*> values;
  for (const json& r : runs) values.push_back(&r);
  json shared = reference;
  shareInto(values, shared);
  return shared;
}

}  // namespace wb::report
