#pragma once
// Runs as TensorBoard event files (`export --format tensorboard`, the window's Export): one folder
// per run under the output folder, named by the run's folder, holding one event file
//
//   OUT/<run>/events.out.tfevents.<start unix seconds>.<host>.workbench
//
// with the run's figures as scalars (per step: loss, learning rate, throughput, the step-time
// split, memory; per evaluation: val loss, val accuracy, evaluation time; per epoch), its config
// as text and as the HParams plugin's hyperparameters, and its speedups named (a text and an
// hparam). Records are TFRecord-framed (length, masked CRC32C of the length, payload, masked
// CRC32C of the payload); the payloads are Event messages (core/report/proto/tfevents.proto)
// encoded with libprotobuf. Rank 0's events only, as the report's curves. Values only: no Qt.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wb/common/result.h"

namespace wb::report {

// The event-file text every exported file starts with (Event.file_version).
inline constexpr const char* kTensorBoardFileVersion = "brain.Event:2";

// CRC-32C (Castagnoli), and the masked form TFRecord stores: ((c >> 15) | (c << 17)) + 0xa282ead8.
uint32_t crc32c(const void* data, size_t size);
uint32_t maskedCrc32c(const void* data, size_t size);
// One TFRecord: 8-byte little-endian length, its masked CRC, the payload, the payload's masked CRC.
std::string tfRecord(const std::string& payload);

struct TensorBoardRun {
  std::string run_dir;          // the run folder it was read from
  std::filesystem::path file;   // the event file written
  std::string name;             // the folder under the output (TensorBoard's run name)
  int64_t scalars = 0;          // scalar values written
};

// The event file's bytes for one run folder (config.json, events.jsonl, summary.json). Errors as
// records::loadRun (a folder that is not a run).
Result<std::string> tensorBoardEvents(const std::string& run_dir, int64_t* scalars = nullptr);

// Writes each run folder into `out` (made when missing). Runs with the same folder name get
// "-2", "-3", ... in the order given. Nothing is overwritten: a run's folder under `out` that
// already holds event files is an error naming it, and then nothing is written at all. Errors
// (Io) name the folder or file: `out` is a file, a run cannot be read, a file cannot be written.
Result<std::vector<TensorBoardRun>> writeTensorBoard(const std::vector<std::string>& run_dirs,
                                                     const std::filesystem::path& out);

}  // namespace wb::report
