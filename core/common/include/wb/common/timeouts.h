#pragma once
// Timeouts that several layers default to, once.
namespace wb {

// Seconds before a collective with a dead peer fails: the default of `run` and `worker
// --collective-timeout`, and so of the launcher and the communicator.
inline constexpr int kDefaultCollectiveTimeoutS = 300;

}  // namespace wb
