#pragma once
// JSON form of wb::Config (the file the CLI and the GUI both read and write).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::proto {

// An experiment file (the window's Save) may hold the user's own training command beside the
// config's fields, "command": "python3 train.py ... {precision}" (wb/proto/command_template.h):
// configFromJson skips it; commandOf reads it ("" when there is none).
inline constexpr const char* kCommandKey = "command";
std::string commandOf(const nlohmann::json& doc);

// The value at a dotted config path ("speedups.workers") in a document, or null when it has none.
nlohmann::json valueAt(const nlohmann::json& doc, const std::string& dotted);

// Every field, defaults filled in.
nlohmann::json configToJson(const Config& config);

// The option schema (wb/common/config_schema.h) with each field's default and type, in field
// order: [{path, label, help, type (integer | number | boolean | string), default, and for a
// number: min, max (null: unbounded), min_included, max_included; for an enum-like field: choices
// [{value, label, help}]}] (`run --print-schema`).
nlohmann::json schemaJson();

// Parses a document (missing fields take defaults). Collects every type error (an integer
// outside its field's type range is one) and unknown field (with its path) plus every semantic
// error from wb::validate of the fields that parsed, and returns them all at once in one
// InvalidConfig error, one line per field.
Result<Config> configFromJson(const nlohmann::json& doc);

// A config as a run or the window wrote it, unchecked: each field `doc` holds with its field's
// type, over wb::Config's defaults (a field missing, or of another type, keeps its default).
// For reading a recorded run's settings, never for starting one.
Config configAsWritten(const nlohmann::json& doc);

// Same, from a file (error names the file).
Result<Config> loadConfigFile(const std::string& path);

// Reads a config file as a JSON document. InvalidConfig naming the file when it cannot be
// opened, and "<file>:<line>:<column>: not valid JSON: ..." when it does not parse.
Result<nlohmann::json> readConfigDocument(const std::string& path);

// Applies one "key.path=value" override to a document. The value is parsed as JSON when it is
// valid JSON (numbers, true/false, quoted strings), else taken as a string. Unknown keys are an
// error naming the key. A value that is not JSON stays a string, so a number field given one
// (e.g. optim.lr=1e999, which overflows a double) is a type error of that field.
Status applyOverride(nlohmann::json& doc, const std::string& assignment);

// Field-level errors, as structured values (the GUI shows each beside its widget): the same
// set configFromJson reports.
std::vector<FieldError> configErrors(const nlohmann::json& doc);

}  // namespace wb::proto
