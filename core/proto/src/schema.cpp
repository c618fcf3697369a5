#include "wb/proto/schema.h"

#include "wb/common/config.h"
#include "wb/common/speedups.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"

namespace wb::proto {
using nlohmann::json;

json runFolderSchema() {
  json records = eventFieldLists();
  records.update(summaryFieldLists());
  json keys = json::array();
  for (const Speedup& s : speedupTable()) keys.push_back(s.key);
  return {{"version", kEventVersion},
          {"records", std::move(records)},
          {"statuses", {kStatusOk, kStatusFailed, kStatusCancelled, kStatusEarlyStopped, kStatusDiverged}},
          {"speedup_keys", std::move(keys)},
          {"speedups_off", configToJson(speedupsOff(Config{}))["speedups"]},
          {"contended_other_cores", kContendedOtherCores}};
}

}  // namespace wb::proto
