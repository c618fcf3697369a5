#include "wb/launch/run_end.h"

#include "wb/proto/event_types.h"

namespace wb::launch {

namespace {

// What the events file could not hold becomes part of the end: records lost fail the run (the
// training's own end is kept as training_status), records only late are said in a warning.
void settle(proto::EventSink& sink, RunEnding& end, const RunEndEvents& events) {
  const proto::EventsFileEnd file = proto::settleEventsFile(sink, end.status);
  proto::RunSummary& s = end.summary;
  if (!file.error.empty()) s.events_error = file.error;
  if (file.late > 0) s.events_late = file.late;
  if (file.lost == 0) {
    if (file.late > 0)
      events.send(proto::toEvent(proto::WarningEvent{file.message, sink.filePath()}, events.rank, events.clock()));
    return;
  }
  const bool failedAlready = end.status == proto::kStatusFailed;
  s.training_status = end.status;
  s.events_lost = file.lost;
  end.error = failedAlready && !end.error.empty() ? end.error + "; " + file.message : file.message;
  if (!failedAlready) end.failed_rank = -1;
  if (end.failed_rank < 0) end.error_code = events.lost_code;
  end.status = proto::kStatusFailed;
}

}  // namespace

EndedRun endRun(const proto::RunDir& run, const std::string& name, proto::EventSink& sink, RunEnding end,
                const RunEndEvents& events) {
  settle(sink, end, events);
  proto::RunSummary& s = end.summary;
  if (end.status == proto::kStatusFailed) {
    s.error = end.error;
    if (end.failed_rank >= 0) s.failed_rank = end.failed_rank;
  }
  s.status = end.status;
  s.run_id = run.id();
  s.name = name;
  s.run_dir = run.root.string();

  if (end.status == proto::kStatusFailed) {
    proto::ErrorEvent err{end.error, end.error_code, std::nullopt};
    if (end.failed_rank >= 0 && s.log_tail) err.log_tail = s.log_tail;
    events.send(proto::toEvent(err, end.failed_rank >= 0 ? end.failed_rank : events.rank, events.clock()));
  }
  EndedRun out;
  out.written = proto::writeJsonAtomic(run.summary(), proto::toJson(s));
  events.send(proto::toEvent(proto::EndEvent{end.status, s}, events.rank, events.clock()));
  out.status = end.status;
  out.error = end.error;
  out.failed_rank = end.status == proto::kStatusFailed ? end.failed_rank : -1;
  out.summary = std::move(s);
  return out;
}

}  // namespace wb::launch
