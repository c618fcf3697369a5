#pragma once
// The events that carry the run's figures, as types (the schema is events.h's comment; these
// are its code): the trainer fills a struct and writes it into an event made by makeEvent, and
// core/report decodes the same struct, so writer and readers spell each field once, here.
// Decoding is tolerant, as numberOr & co: a missing field, null (a non-finite number) or a value
// of another type keeps the member's default; it never throws.
#include <cstdint>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

namespace wb::proto {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// A step event's ms: mean milliseconds per step of each phase over the log interval.
struct StepPhases {
  double data = 0, h2d = 0, fwd = 0, bwd = 0, comm = 0, opt = 0;
};

struct StepEvent {                 // type "step", every log interval
  int epoch = 0;                   // 1-based
  int64_t step = 0;                // training steps so far (all lives of the run)
  int64_t samples = 0;             // global samples so far
  double loss = kUnknown;          // mean over the interval and every rank
  double lr = kUnknown;
  double samples_per_s = 0;        // training steps only, over the interval
  double step_ms = 0;              // mean step time over the interval
  std::optional<StepPhases> ms;
  nlohmann::json mem;              // {device, alloc, reserved, peak, rss, rss_peak, page_faults_per_step}
  nlohmann::json cpu;              // {process_cores, machine_busy_cores, other_cores, cores, threads}
  nlohmann::json comm;             // several ranks: {comm_ms, overlap, bytes_reduced, ...}
  nlohmann::json amp;              // fp16: {scale, skipped}
  double progress = 0;             // 0..1 of the planned steps
  double eta_s = 0;
};

struct EvalEvent {                 // type "eval", after each epoch
  int epoch = 0;
  int64_t step = 0;
  int64_t samples = 0;
  double val_loss = kUnknown;
  double val_acc = kUnknown;       // 0..1
  double eval_ms = 0;
  int64_t eval_samples = 0;
  bool inference_mode = false;
  nlohmann::json mem;
};

struct EpochEvent {                // type "epoch", after each evaluation
  int epoch = 0;
  double seconds = 0;              // the epoch's wall time, evaluation included
  double train_seconds = 0;        // its training steps only
  int64_t samples = 0;
  double train_samples_per_s = 0;  // samples / train_seconds
  double samples_per_s = 0;        // older readers' name for train_samples_per_s (older writers:
                                   // samples / (epoch seconds - evaluation))
  double train_loss = kUnknown;
  bool complete = true;            // false: stopped inside the epoch (max_steps)
};

// Adds the struct's fields to `event` (from makeEvent); absent optional parts are left out.
void writeFields(const StepEvent& e, nlohmann::json& event);
void writeFields(const EvalEvent& e, nlohmann::json& event);
void writeFields(const EpochEvent& e, nlohmann::json& event);

StepEvent readStepEvent(const nlohmann::json& event);
EvalEvent readEvalEvent(const nlohmann::json& event);
EpochEvent readEpochEvent(const nlohmann::json& event);

}  // namespace wb::proto
