#pragma once
// A spin box's bounds from the config schema (wb/common/config_schema.h), the ranges validate()
// checks: the window never clamps a value the config allows, nor offers one it refuses. An
// unbounded end is the box's own limit.
class QAbstractSpinBox;
class QDoubleSpinBox;
class QSpinBox;

namespace wb::ui {

inline constexpr double kDoubleBoxLimit = 1e9;  // a QDoubleSpinBox's top for a field unbounded above

// scale: the box shows the field times this (100: a fraction as a percentage); kept in the box's
// "schemaScale" property.
void setSchemaRange(QSpinBox* box, const char* path, double scale = 1);
// After setDecimals: an open end moves in by the box's smallest step ([0, 1) with two decimals is 0 to 0.99).
void setSchemaRange(QDoubleSpinBox* box, const char* path);

// A number typed outside the box's range stays as typed, to be refused and named (the set-up panel
// shows "Epochs: 99999999 — must be in 1..1000000"): the box no longer drops the keystroke that
// takes it out of range (typing 99999999 into Epochs left 999999, silently), nor puts its last
// good value back when it loses focus or on Enter. Text that is no number is still not taken. The
// box's value stays the last good one while such text stands (hasAcceptableInput() is false).
void keepTypedNumbers(QAbstractSpinBox* box);

}  // namespace wb::ui
