#include "wb/proto/experiment_events.h"

#include "wb/proto/events.h"
#include "wb/proto/fields.h"

namespace wb::proto {
using nlohmann::json;

WB_FIELDS(PairEndEvent) {
  f("index", e.index), f("key", e.key), f("pair", e.pair), f("variant_first", e.variant_first);
  f("counted", e.counted), f("settled", e.settled), f("estimate", e.estimate);
}

WB_FIELDS(TryEndEvent) { f("status", e.status), f("out_dir", e.out_dir), f("result", e.result), f("answer", e.answer); }

WB_FIELDS(PhaseEvent) { f("phase", e.phase), f("done", e.done), f("total", e.total), f("kept", e.kept); }

void writeFields(const PairEndEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const PhaseEvent& e, json& event) { fieldsToJson(e, event); }
void writeFields(const TryEndEvent& e, json& event) { fieldsToJson(e, event); }
PairEndEvent readPairEndEvent(const json& event) { return readAs<PairEndEvent>(event); }
TryEndEvent readTryEndEvent(const json& event) { return readAs<TryEndEvent>(event); }
PhaseEvent readPhaseEvent(const json& event) { return readAs<PhaseEvent>(event); }

}  // namespace wb::proto
