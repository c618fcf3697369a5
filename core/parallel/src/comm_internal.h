#pragma once
// Shared by communicator.cpp and data_parallel.cpp: the process group behind a Communicator and
// one way to turn a failed collective into an error that names the rank and the operation.
#include <exception>
#include <string>

#include "wb/parallel/c10d_compat.h"
#include "wb/parallel/communicator.h"

namespace wb::parallel {

struct Communicator::Impl {
  DistEnv env;
  CommOptions options;
  c10::intrusive_ptr<c10d::Store> store;                 // null for a local communicator
  c10::intrusive_ptr<compat::CollectiveBackend> pg;      // null for a local communicator
  torch::Device device{torch::kCPU};
};

// The message of an exception without LibTorch's C++ backtrace.
std::string shortWhat(const std::exception& e);

// "rank 1: all-reduce failed: <why>. A peer rank probably exited or stopped answering (see its
// log); collectives give up after 300 s (CommOptions::timeout)."
Error collectiveError(const Communicator::Impl& impl, const std::string& op, const std::exception& e);

// Waits until `work` has completed (on NCCL too: the host blocks until the device has finished it,
// within CommOptions::timeout); a failure or a timeout becomes collectiveError(op).
Status waitWork(const Communicator::Impl& impl, const std::string& op, const c10::intrusive_ptr<c10d::Work>& work);

}  // namespace wb::parallel
