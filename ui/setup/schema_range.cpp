#include "setup/schema_range.h"

#include <QDoubleSpinBox>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <limits>

#include "wb/common/config_schema.h"

namespace wb::ui {
namespace {

const Range& rangeOf(const char* path) {
  const FieldSpec* spec = findFieldSpec(path);
  Q_ASSERT_X(spec && spec->number, "setSchemaRange", path);
  static const Range any;
  return spec ? spec->range : any;
}

}  // namespace

void setSchemaRange(QSpinBox* box, const char* path, double scale) {
  const Range& r = rangeOf(path);
  const double top = std::numeric_limits<int>::max();
  const double lo = r.min * scale + (r.min_included ? 0 : 1), hi = r.max * scale - (r.max_included ? 0 : 1);
  box->setProperty("schemaScale", scale);
  box->setRange(int(std::clamp(lo, -top, top)), int(std::clamp(hi, -top, top)));
}

void setSchemaRange(QDoubleSpinBox* box, const char* path) {
  const Range& r = rangeOf(path);
  const double step = std::pow(10.0, -box->decimals());
  const double lo = r.min_included ? r.min : r.min + step, hi = r.max_included ? r.max : r.max - step;
  box->setRange(std::max(lo, -kDoubleBoxLimit), std::min(hi, kDoubleBoxLimit));
}

}  // namespace wb::ui
