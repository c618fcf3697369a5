#include "wb/proto/experiment_events.h"

#include "wb/proto/events.h"

namespace wb::proto {
using nlohmann::json;

void writeFields(const PairEndEvent& e, json& event) {
  event["index"] = e.index;
  event["key"] = e.key;
  event["pair"] = e.pair;
  event["variant_first"] = e.variant_first;
  event["counted"] = e.counted;
  event["settled"] = e.settled;
  event["estimate"] = e.estimate;
}

void writeFields(const TryEndEvent& e, json& event) {
  event["status"] = e.status;
  event["out_dir"] = e.out_dir;
  event["result"] = e.result;
}

PairEndEvent readPairEndEvent(const json& event) {
  PairEndEvent e;
  e.index = intOr(event, "index", 0);
  e.key = stringOr(event, "key", "");
  e.pair = static_cast<int>(intOr(event, "pair", 0));
  e.variant_first = boolOr(event, "variant_first", false);
  e.counted = boolOr(event, "counted", false);
  e.settled = stringOr(event, "settled", "");
  if (event.is_object() && event.contains("estimate") && event["estimate"].is_object()) e.estimate = event["estimate"];
  return e;
}

TryEndEvent readTryEndEvent(const json& event) {
  TryEndEvent e;
  e.status = stringOr(event, "status", kStatusFailed);
  e.out_dir = stringOr(event, "out_dir", "");
  if (event.is_object() && event.contains("result")) e.result = event["result"];
  return e;
}

}  // namespace wb::proto
