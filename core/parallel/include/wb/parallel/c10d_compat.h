#pragma once
// The one place that knows how c10d and torch::optim moved between LibTorch 1.13 (Debian, here)
// and 2.x (PyTorch 2.11's LibTorch on the GPU machine). Internal to wb_parallel's sources: it pulls
// in c10d headers, which the public headers never do.
//
//  - 1.13: ProcessGroupGloo/NCCL derive from c10d::ProcessGroup, which carries the collectives.
//    2.x:  they derive from c10d::Backend (ProcessGroup became a dispatcher over backends).
//    Both spell the collectives the same, so wb_parallel holds a CollectiveBackend pointer.
//  - The c10d headers compile their classes only under USE_C10D_GLOO / USE_C10D_NCCL, which the
//    LibTorch build defines for itself but not for consumers.
//  - 2.x's TCPStore defaults to the libuv server (TCPStoreOptions::useLibUV = true), which a build
//    without libuv (Debian 13's 2.6) refuses at construction; 1.13 has only the legacy server.
//  - torch::optim::Optimizer::state() is keyed by the TensorImpl address printed as a string in
//    1.13 and by the address itself (void*) in 2.x.
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include <torch/torch.h>
#include <torch/version.h>

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace wb::parallel::compat {

#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// The key under which `optimizer.state()` holds the state of parameter `t`.
template <class StateMap>
typename StateMap::key_type optimizerStateKey(const StateMap& /*state*/, const torch::Tensor& t) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;  // what c10::guts::to_string(TensorImpl*) prints in 1.13
    os << static_cast<const void*>(t.unsafeGetTensorImpl());
    return os.str();
  } else {
    return static_cast<Key>(t.unsafeGetTensorImpl());
  }
}

template <class O, class = void>
struct HasUseLibUV : std::false_type {};
template <class O>
struct HasUseLibUV<O, std::void_t<decltype(std::declval<O&>().useLibUV)>> : std::true_type {};

// A TCPStore made with the server this build has: libuv where built in (2.x's default), else the
// legacy one. Clients talk the same protocol to either, so a rank may join a libuv store hosted by
// torchrun's agent whatever its own build. Throws what TCPStore throws.
template <class Options = c10d::TCPStoreOptions>
c10::intrusive_ptr<c10d::TCPStore> makeTCPStore(const std::string& host, Options o) {
  if constexpr (HasUseLibUV<Options>::value) {
    try {
      return c10::make_intrusive<c10d::TCPStore>(host, o);
    } catch (const c10::Error& e) {
      if (!o.useLibUV || std::string(e.what()).find("without libuv") == std::string::npos) throw;
      o.useLibUV = false;
    }
  }
  return c10::make_intrusive<c10d::TCPStore>(host, o);
}

}  // namespace wb::parallel::compat
