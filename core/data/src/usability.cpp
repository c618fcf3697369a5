#include "wb/data/usability.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "wb/common/config_schema.h"
#include "wb/common/format.h"
#include "wb/data/dataset.h"

namespace wb::data {

bool tooManyUnreadable(int64_t bad, int64_t total, double maxBadFraction) {
  return static_cast<double>(bad) > maxBadFraction * static_cast<double>(total);
}

UnreadableCount countUnreadable(const Dataset& dataset, int64_t limit) {
  UnreadableCount c;
  c.size = dataset.size();
  c.checked = std::min(c.size, std::max<int64_t>(limit, 1));
  for (int64_t j = 0; j < c.checked; ++j) {
    try {
      dataset.get(j * c.size / c.checked);
    } catch (const SampleError& e) {
      if (c.bad++ == 0) c.first = e.what();
    }
  }
  return c;
}

std::string unreadableRefusal(const UnreadableCount& c, double maxBadFraction) {
  if (c.checked <= 0 || !tooManyUnreadable(c.bad, c.checked, maxBadFraction)) return {};
  const FieldSpec* spec = findFieldSpec("data.max_bad_fraction");
  std::ostringstream out;
  out << c.bad << " of " << c.checked << (c.checked < c.size ? " images sampled" : " images")
      << " cannot be read, more than the " << shortNumber(maxBadFraction * 100) << " % \"" << (spec ? spec->label : "")
      << "\" lets a run skip: it would stop (first: " << c.first << "). Fix or remove the files, or raise that share";
  return out.str();
}

namespace {

proto::SplitInspection splitOf(const DatasetInfo& info) {
  return {info.size, info.class_names, info.class_counts, info.channels, info.height, info.width, info.mean, info.stddev};
}

void addProblem(proto::DatasetInspection& r, const std::string& problem) {
  r.ok = false;
  if (std::find(r.problems.begin(), r.problems.end(), problem) == r.problems.end()) r.problems.push_back(problem);
}

// One split into r: its figures, its warnings, and what a run on it would stop on.
void inspectSplit(proto::DatasetInspection& r, const std::string& split, double maxBadFraction) {
  auto ds = openDataset(r.spec, split);
  if (!ds.ok()) return addProblem(r, ds.error().message);  // a missing folder fails both splits in the same words: once
  const DatasetInfo& info = (*ds)->info();
  r.splits[split] = splitOf(info);
  for (const auto& p : info.problems) r.problems.push_back(split + ": " + p);
  if (const std::string refusal = unreadableRefusal(countUnreadable(**ds), maxBadFraction); !refusal.empty())
    addProblem(r, split + ": " + refusal);  // the run's own rule: the check refuses what the run would stop on
}

}  // namespace

Result<proto::DatasetInspection> inspectDataset(const std::string& spec, double maxBadFraction) {
  auto parsed = parseDatasetSpec(spec);
  if (!parsed.ok()) return parsed.error();
  proto::DatasetInspection r;
  r.spec = spec;
  std::error_code ec;  // a folder that is a link loop is the reader's error to name, not an exception
  const bool singleFolder = parsed->kind == "folder" && std::filesystem::is_directory(parsed->dir, ec) &&
                            !std::filesystem::is_directory(parsed->dir + "/train", ec);
  inspectSplit(r, "train", maxBadFraction);
  if (singleFolder) {  // usable, with part of train held out: a note, not a problem
    r.test_split = false;
    r.notes.push_back("no test split (" + parsed->dir + " is one folder): runs need data.val_fraction > 0");
    return r;
  }
  inspectSplit(r, "test", maxBadFraction);
  const auto train = r.splits.find("train"), test = r.splits.find("test");
  if (train != r.splits.end() && test != r.splits.end() && !train->second.classes.empty() &&
      train->second.classes != test->second.classes)
    addProblem(r, "the test split's classes differ from train's: give both splits the same class folders");
  return r;
}

}  // namespace wb::data
