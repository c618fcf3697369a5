#pragma once
// The kinds of experiment a folder holds (a try, a ladder, a search), one entry each in one
// table: its command, what the window's list calls it, its record file, which of its runs carry
// its answer, what opening it shows, and its answer sentence read from its record. The CLI (the
// commands' folders, which commands launch runs), the window's list of experiments and what
// opens them loop over this table: a new kind is an entry here, its record and its runner.
// Never throws; no I/O but reading a record.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::kinds {

inline constexpr const char* kTry = "try";
inline constexpr const char* kLadder = "ladder";
inline constexpr const char* kTune = "tune";

struct ExperimentKind {
  const char* id;           // its command (`workbench-cli try`) and its folders' stem (20261207-101500-try)
  const char* name;         // what the window's list of experiments calls it ("search" for tune)
  const char* record;       // its record in its folder (wb/proto/record_files.h)
  const char* answer_runs;  // its folder whose runs carry its answer when none runs to the target
                            // ("finals": a search's finalists); "" when it has none
  const char* opens;        // what opening it in the window shows, in words; "" for its table alone
  // The answer sentence its record holds as written ("" when it has none: the caller says why).
  std::string (*answer)(const nlohmann::json& record);
};

// Every kind, in the order a folder is recognised by (a ladder's folder first: its steps' tries
// keep their try.json in folders of their own).
const std::vector<ExperimentKind>& experimentKinds();
// The kind whose id or name this is; nullptr when none.
const ExperimentKind* findKind(const std::string& idOrName);
// The kind whose record `dir` holds (the first in experimentKinds()); nullptr when it holds none.
const ExperimentKind* kindOfFolder(const std::filesystem::path& dir);
// <dir>/<its record>.
std::filesystem::path recordIn(const ExperimentKind& kind, const std::filesystem::path& dir);
// The answer <dir>'s record holds; "" when the record is missing, unreadable or has none.
std::string answerIn(const ExperimentKind& kind, const std::filesystem::path& dir);

}  // namespace wb::kinds
