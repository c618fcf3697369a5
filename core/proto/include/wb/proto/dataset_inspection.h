#pragma once
// `workbench-cli dataset inspect --json`, typed: what a dataset holds and whether a run can use it
// as it is. Made by core/data's inspectDataset (wb/data/usability.h), printed by the CLI, read back
// by the window's dataset check; one field list (wb/proto/fields.h) writes and reads it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::proto {

struct SplitInspection {
  int64_t size = 0;
  std::vector<std::string> classes;
  std::vector<int64_t> class_counts;  // samples per class, in the order of `classes`
  int channels = 0, height = 0, width = 0;  // height and width 0: the images' sizes vary
  std::vector<double> mean, std;      // per channel, 0..1 scale
};

struct DatasetInspection {
  bool ok = true;                     // a run can use it as it is
  std::string spec;
  std::map<std::string, SplitInspection> splits;  // "train", "test": those that opened
  bool test_split = true;             // false: one folder; runs hold part of train out
  std::vector<std::string> problems;  // what makes it unusable, or warnings ("train: ...")
  std::vector<std::string> notes;

  // The splits that opened, train first.
  std::vector<std::string> splitNames() const {
    std::vector<std::string> names;
    if (splits.count("train")) names.push_back("train");
    for (const auto& [name, split] : splits)
      if (name != "train") names.push_back(name);
    return names;
  }
};

nlohmann::json inspectionToJson(const DatasetInspection& inspection);
// Tolerant: what the document lacks keeps its default.
DatasetInspection inspectionFromJson(const nlohmann::json& doc);

}  // namespace wb::proto
