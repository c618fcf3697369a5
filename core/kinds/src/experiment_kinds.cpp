// The registry of experiment kinds (experiment_kinds.h): one entry per kind, each answer read
// through its record's own type.
#include "wb/kinds/experiment_kinds.h"

#include "wb/ladder/ladder.h"
#include "wb/proto/record_files.h"
#include "wb/proto/rundir.h"
#include "wb/proto/try_record.h"
#include "wb/proto/tune_record.h"

namespace wb::kinds {
namespace fs = std::filesystem;

namespace {

std::string tryAnswerOf(const nlohmann::json& record) { return proto::tryRecordFromJson(record).answer; }
std::string ladderAnswerOf(const nlohmann::json& record) { return ladder::storedLadderAnswer(record); }
std::string tuneAnswerOf(const nlohmann::json& record) {
  return record.is_object() ? proto::readTuneRecord(record).answer : std::string();
}

}  // namespace

const std::vector<ExperimentKind>& experimentKinds() {
  static const std::vector<ExperimentKind> kinds{
      {kLadder, "ladder", proto::kLadderFile, "", "", ladderAnswerOf},
      {kTry, "try", proto::kTryFile, "", "its runs in the runs list, its answer on the plots", tryAnswerOf},
      {kTune, "search", proto::kTuneFile, "finals", "its answer on the Fastest tab, its runs in the runs list", tuneAnswerOf},
  };
  return kinds;
}

const ExperimentKind* findKind(const std::string& idOrName) {
  for (const ExperimentKind& k : experimentKinds())
    if (idOrName == k.id || idOrName == k.name) return &k;
  return nullptr;
}

const ExperimentKind* kindOfFolder(const fs::path& dir) {
  std::error_code ec;
  for (const ExperimentKind& k : experimentKinds())
    if (fs::is_regular_file(recordIn(k, dir), ec)) return &k;
  return nullptr;
}

fs::path recordIn(const ExperimentKind& kind, const fs::path& dir) { return dir / kind.record; }

std::string answerIn(const ExperimentKind& kind, const fs::path& dir) {
  const proto::StoredRecord stored = proto::readRecordFile(recordIn(kind, dir));
  return stored.read() ? kind.answer(stored.doc) : std::string();
}

}  // namespace wb::kinds
