#include "wb/data/usability.h"

#include <algorithm>
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
      << " cannot be read, more than the " << shortNumber(maxBadFraction * 100) << " % " << (spec ? spec->label : "")
      << " (data.max_bad_fraction) lets a run skip: it would stop (first: " << c.first
      << "). Fix or remove the files, or raise that share";
  return out.str();
}

}  // namespace wb::data
