#pragma once
// A numerical self-check of the LibTorch build at a rank's start: a small convolution forward and
// backward (LeNet's shapes, the run's threads) against a double-precision reference computed by
// LibTorch's native path. Some builds compute wrong or non-finite values (Debian 13's LibTorch 2.6
// returns NaN gradients from oneDNN 3.7's conv backward on AVX-512 CPUs in some processes); an
// instrument must not report figures from them.
//
// When the check fails with oneDNN on, oneDNN is switched off for this process and the check runs
// again; when it then passes, the run goes on without oneDNN and says so. When it still fails, the
// run cannot be trusted: an error naming the library versions.
//
// Thread affinity: the thread that trains, after its intra-op threads are set. Collective when
// `comm` has a group: every rank calls it, and all ranks switch oneDNN off when one needs to, so
// the ranks compute the same way.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "wb/common/result.h"

namespace wb::parallel {
class Communicator;
}

namespace wb::train {

struct BackendCheck {
  bool ok = false;               // the library computes right, as this process now runs it
  bool mkldnn_disabled = false;  // oneDNN was switched off for this process because it computed wrong
  std::string detail;            // in words: what was compared and what came out
  nlohmann::json versions;       // libtorch, onednn, cpu_capability
  nlohmann::json toJson() const; // {ok, mkldnn_disabled, detail, versions} for the start event
};

struct BackendCheckHooks {
  // Tests only: called on the library's results (output, grad input, grad weight of each conv)
  // before they are compared with the reference, with whether oneDNN is enabled at that moment;
  // it may change them, as a broken build would.
  std::function<void(std::vector<torch::Tensor>& computed, bool mkldnn_enabled)> tamper;
  int trials = 3;  // forward+backward repeats per check (a broken kernel can fail only sometimes)
};

// Runs the check (and the fallback). Whole-process tests set WB_TEST_BACKEND_FAULT=nan-with-onednn
// or nan-always for a tamper hook (used only when `hooks` has none). Errors: Internal naming the LibTorch and oneDNN versions when
// the library computes wrong even without oneDNN; Distributed when the ranks cannot agree.
Result<BackendCheck> checkBackend(parallel::Communicator* comm = nullptr, const BackendCheckHooks& hooks = {});

// The versions the check reports (LibTorch, oneDNN, the CPU kernels' instruction set).
nlohmann::json backendVersions();

}  // namespace wb::train
