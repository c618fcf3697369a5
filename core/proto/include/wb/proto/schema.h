#pragma once
// The run folder's schema as data, for writers in other languages (the Python recorder in
// app/python/workbench_recorder, which tests/app/python/test_recorder_schema.cpp checks against
// it) and for readers that say what they skipped. Generated from the field lists that read and
// write each record (event_types.cpp, run_summary.cpp), so it cannot drift from them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::proto {

// {"version": kEventVersion,
//  "records": {"envelope": {"v": "integer", ...}, "step": {...}, "step.ms": {...}, ...,
//              "summary": {...}, "summary.cpu": {...}},     <- key: kind (integer | number |
//                                                               boolean | string | json | object | map)
//  "statuses": ["ok", ...], "speedup_keys": ["workers", ...],
//  "speedups_off": {...},            <- the config's speedups section with every speedup off
//  "contended_other_cores": 0.3}     <- wb::kContendedOtherCores
// Records are named by where they sit: "step.mem" is a step event's mem, "start.speedups.*" each
// entry of the start event's speedups map, "summary" summary.json (and the end event's summary).
nlohmann::json runFolderSchema();

// The event records of a run's stream (event_types.cpp's lists), and summary.json's (run_summary.cpp's).
nlohmann::json eventFieldLists();
nlohmann::json summaryFieldLists();

// The keys of `event` that neither the envelope nor its type's field list names (sorted): what a
// reader of this schema skips. Empty for a type this schema has no list for (see knownEventType).
std::vector<std::string> unknownEventFields(const nlohmann::json& event);
// Whether the run stream's schema has a list for `type` (run, start, step, ..., end).
bool knownEventType(const std::string& type);

// Why `event` cannot be read as the step or eval its type says, in words ("" when it can, and
// for every other type): a step without its loss, an eval with neither val_acc nor val_loss, or
// a figure of its list (or the envelope's) that is neither a number nor null (null is a NaN the
// writer knew of: a diverged loss). Such a line is skipped like one that is not JSON (decodeEvent),
// so that no reader plots, prints or compares it as NaN.
std::string unreadableFigures(const nlohmann::json& event);

}  // namespace wb::proto
