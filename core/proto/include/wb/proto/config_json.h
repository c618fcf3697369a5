#pragma once
// JSON form of wb::Config (the file the CLI and the GUI both read and write).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::proto {

// Every field, defaults filled in.
nlohmann::json configToJson(const Config& config);

// Parses a document (missing fields take defaults). Collects every type error and unknown
// field (with its path) plus every semantic error from wb::validate, and returns them all at
// once in one InvalidConfig error, one line per field.
Result<Config> configFromJson(const nlohmann::json& doc);

// Same, from a file (error names the file).
Result<Config> loadConfigFile(const std::string& path);

// Applies one "key.path=value" override to a document. The value is parsed as JSON when it is
// valid JSON (numbers, true/false, quoted strings), else taken as a string. Unknown keys are an
// error naming the key.
Status applyOverride(nlohmann::json& doc, const std::string& assignment);

// Field-level errors, as structured values (the GUI shows each beside its widget).
std::vector<FieldError> configErrors(const nlohmann::json& doc);

}  // namespace wb::proto
