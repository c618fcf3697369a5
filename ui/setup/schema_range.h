#pragma once
// A spin box's bounds from the config schema (wb/common/config_schema.h), the ranges validate()
// checks: the window never clamps a value the config allows, nor offers one it refuses. An
// unbounded end is the box's own limit.
class QDoubleSpinBox;
class QSpinBox;

namespace wb::ui {

inline constexpr double kDoubleBoxLimit = 1e9;  // a QDoubleSpinBox's top for a field unbounded above

// scale: the box shows the field times this (100: a fraction as a percentage); kept in the box's
// "schemaScale" property.
void setSchemaRange(QSpinBox* box, const char* path, double scale = 1);
// After setDecimals: an open end moves in by the box's smallest step ([0, 1) with two decimals is 0 to 0.99).
void setSchemaRange(QDoubleSpinBox* box, const char* path);

}  // namespace wb::ui
