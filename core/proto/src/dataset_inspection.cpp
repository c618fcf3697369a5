#include "wb/proto/dataset_inspection.h"

#include "wb/proto/fields.h"

namespace wb::proto {

WB_FIELDS(SplitInspection) {
  f("size", e.size), f("classes", e.classes), f("class_counts", e.class_counts);
  f("channels", e.channels), f("height", e.height), f("width", e.width), f("mean", e.mean), f("std", e.std);
}

WB_FIELDS(DatasetInspection) {
  f("ok", e.ok), f("spec", e.spec), f("splits", e.splits), f("test_split", e.test_split);
  f("problems", e.problems), f("notes", e.notes);
}

nlohmann::json inspectionToJson(const DatasetInspection& inspection) {
  nlohmann::json out = nlohmann::json::object();
  fieldsToJson(inspection, out);
  return out;
}

DatasetInspection inspectionFromJson(const nlohmann::json& doc) { return readAs<DatasetInspection>(doc); }

}  // namespace wb::proto
