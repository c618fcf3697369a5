#include "wb/proto/reference_record.h"

#include "wb/proto/fields.h"

namespace wb::proto {
using nlohmann::json;

WB_FIELDS(ReferenceRunRecord) { f("seed", e.seed), f("dir", e.dir), f("status", e.status); }

WB_FIELDS(ReferenceRecord) {
  f("key", e.key), f("dataset_id", e.dataset_id), f("config", e.config), f("eval_every_steps", e.eval_every_steps);
  f("updated_at", e.updated_at), f("runs", e.runs);
}

json referenceRecordJson(const ReferenceRecord& record) { return proto::writeAs(record); }

ReferenceRecord referenceRecordFromJson(const json& doc) { return proto::readAs<ReferenceRecord>(doc); }

std::string referenceRunsProblem(const json& doc) {
  const auto it = doc.is_object() ? doc.find("runs") : doc.end();
  if (!doc.is_object() || it == doc.end()) return {};
  if (!it->is_array()) return "its runs are not a list";
  for (const json& r : *it)
    if (!r.is_object()) return "its runs hold a JSON " + std::string(r.type_name()) + ", not a run";
  return {};
}

}  // namespace wb::proto
