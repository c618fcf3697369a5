#pragma once
// Whether a split's unreadable samples would stop a run: the loader's rule (a run stops once more
// than data.max_bad_fraction of an epoch's samples cannot be read), and the dataset check's use of
// it before any run (`workbench-cli dataset inspect`), so the check refuses what the run would
// stop on; and the check itself (inspectDataset). std-only surface: the Dataset is declared, not
// included.
#include <cstdint>
#include <string>

#include "wb/common/result.h"
#include "wb/proto/dataset_inspection.h"

namespace wb::data {

class Dataset;

// The rule, one home: more than maxBadFraction of `total` samples unreadable.
bool tooManyUnreadable(int64_t bad, int64_t total, double maxBadFraction);

struct UnreadableCount {
  int64_t bad = 0;      // samples get() could not read
  int64_t checked = 0;  // samples read (all of the split, or an evenly spaced sample of it)
  int64_t size = 0;     // the split's samples
  std::string first;    // the first unreadable one, as get() names it
};

// Reads up to `limit` evenly spaced samples the way the loader does (Dataset::get; every one
// when the split has no more).
UnreadableCount countUnreadable(const Dataset& dataset, int64_t limit = 512);

// Why a run on the split would stop on its unreadable samples, naming the field that allows them;
// "" when it would not.
std::string unreadableRefusal(const UnreadableCount& count, double maxBadFraction);

// What `spec` holds and whether a run can use it as it is: each split's size, classes, image size
// and statistics, and every problem a run would stop on (a split that does not open, more
// unreadable images than maxBadFraction allows, test classes that differ from train's) with
// `ok` false; a single folder (no test split) is usable, with a note. An Error only for a spec
// that cannot be parsed.
Result<proto::DatasetInspection> inspectDataset(const std::string& spec, double maxBadFraction);

}  // namespace wb::data
