#include "wb/train/machine_capabilities.h"

#include <algorithm>

#include <torch/torch.h>
#include <torch/version.h>

#if defined(WB_WITH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#endif

#include "wb/common/config_schema.h"
#include "wb/common/choices.h"
#include "wb/common/speedups.h"
#include "wb/common/sysinfo.h"
#include "wb/parallel/communicator.h"
#include "wb/proto/capabilities_record.h"
#include "wb/train/gpu_versions.h"

namespace wb::train {
using nlohmann::json;

namespace {

bool cudaAvailable() { return torch::cuda::is_available(); }
int cudaDevices() { return cudaAvailable() ? static_cast<int>(torch::cuda::device_count()) : 0; }

// Only where wb_parallel compiled ProcessGroupNCCL: a CUDA LibTorch alone is not enough.
bool ncclAvailable() { return train::ncclAvailable(parallel::ncclCompiled(), cudaAvailable()); }

std::string cudnnVersion() {
  try {
    if (cudaAvailable() && at::detail::getCUDAHooks().hasCuDNN())
      return std::to_string(at::detail::getCUDAHooks().versionCuDNN());
  } catch (const std::exception&) {
  }
  return "";
}

std::vector<std::string> gpuNames(int gpus) {
  std::vector<std::string> names;
#if defined(WB_WITH_CUDA)
  for (int i = 0; i < gpus; ++i) {
    try {
      names.push_back(std::string(at::cuda::getDeviceProperties(i)->name));
    } catch (const std::exception&) {
      names.push_back("cuda:" + std::to_string(i));
    }
  }
#else
  (void)gpus;
#endif
  return names;
}

}  // namespace

json versionsJson() {
  json v;
  v["libtorch"] = TORCH_VERSION;
  // The CUDA runtime this build was compiled against, where a device is usable.
  v["cuda"] = cudaAvailable() ? cudaVersionText(cudaRuntimeVersionOfBuild()) : "";
  v["cudnn"] = cudnnVersion();
  v["nccl"] = ncclAvailable() ? parallel::ncclVersion() : "";
  return v;
}

namespace {

proto::SpeedupCapability speedupNote(bool available, std::string note) {
  proto::SpeedupCapability s;
  s.available = available;
  s.note = std::move(note);
  return s;
}

// Each precision on its own. Without AVX-512 BF16 or AMX, LibTorch's CPU bf16 kernels convert to
// fp32 and back: measured 5x (mnist-cnn) to 25x (resnet18) slower than fp32 on an AVX2 EPYC
// (tests/bench/bench_speedups).
proto::SpeedupCapability precisionCapability(bool cuda) {
  proto::SpeedupCapability s = speedupNote(true, "");
  for (const Choice& p : precisionChoices()) {
    const bool available = !p.needs_cuda || cuda;
    s.values[p.value] = {available, available ? p.help : needsCuda(p.without_cuda), std::nullopt};
  }
  const bool bf16Native = cuda || cpuHasFlag("avx512_bf16") || cpuHasFlag("amx_bf16");
  proto::ValueCapability& bf16 = s.values[choice::kBf16Mixed];
  bf16.native = bf16Native;
  bf16.note = cuda         ? "bf16 autocast on the GPU"
              : bf16Native ? "bf16 autocast on the CPU (AVX-512 BF16 / AMX)"
                           : "bf16 autocast on the CPU; this CPU has no AVX-512 BF16 or AMX, so "
                             "bf16 is emulated and runs several times slower than fp32 here";
  // fp16's advice to use bf16 on the CPU holds only where bf16 is native.
  if (!bf16Native) s.values[choice::kFp16Mixed].note = "needs CUDA; bf16-mixed is emulated on this CPU, so stay at 32-true";
  return s;
}

// Each speedup as its descriptor says here; then the machine's numbers: the workers it suggests,
// the devices it has, and each precision's availability.
std::map<std::string, proto::SpeedupCapability> speedupCapabilities(bool cuda, int gpus, int cores) {
  Here here;
  here.cuda = cuda;
  here.cores = cores;
  here.devices = cuda ? gpus : std::max(1, cores);
  std::map<std::string, proto::SpeedupCapability> s;
  for (const Speedup& sp : speedupTable())
    s[sp.key] = speedupNote(sp.availability != Availability::NeedsCuda || cuda, noteHere(sp, here));
  proto::SpeedupCapability& workers = s[speedup::kWorkers];
  workers.suggested = std::min(cores, 8);
  workers.max = int(findFieldSpec("speedups.workers")->range.max);  // validation's
  proto::SpeedupCapability& devices = s[speedup::kDevices];
  devices.max = here.devices;
  devices.kind = cuda ? "gpus" : "cpu-processes";
  s[speedup::kPrecision] = precisionCapability(cuda);
  return s;
}

}  // namespace

json capabilitiesJson() {
  proto::Capabilities c;
  c.cuda = cudaAvailable();
  c.gpus = cudaDevices();
  c.cores = logicalCores();
  const json versions = versionsJson();
  c.libtorch = TORCH_VERSION;
  c.cuda_version = versions["cuda"].get<std::string>();
  c.cudnn = versions["cudnn"].get<std::string>();
  c.gpu_names = gpuNames(c.gpus);
  c.nccl = ncclAvailable();
  c.gloo = true;
  for (const Choice& m : modelChoices()) c.models.push_back(m.value);
  c.speedups = speedupCapabilities(c.cuda, c.gpus, c.cores);
  return proto::capabilitiesToJson(c);
}

std::vector<FieldError> machineConfigErrors(const Config& c, int world_size, bool allow_oversubscribe) {
  std::vector<FieldError> e;
  const bool cuda = cudaAvailable();
  const Choice* precision = findChoice(precisionChoices(), c.speedups.precision);
  if (precision && precision->needs_cuda && !cuda)
    e.push_back({"speedups.precision", "\"" + c.speedups.precision + "\"", needsCuda(precision->without_cuda)});
  if (cuda && c.speedups.devices > cudaDevices() && world_size <= 1)
    e.push_back({"speedups.devices", std::to_string(c.speedups.devices),
                 "this machine has " + std::to_string(cudaDevices()) + " GPU(s)"});
  const int cores = std::max(1, logicalCores());
  if (!cuda && c.speedups.devices > cores && world_size <= 1 && !allow_oversubscribe)
    e.push_back({"speedups.devices", std::to_string(c.speedups.devices),
                 "this machine has " + std::to_string(cores) + " CPU core(s), the most CPU devices it takes (" +
                     "`workbench-cli capabilities` gives the maximum): more processes than cores only share them, so "
                     "no speedup can be measured; set speedups.devices <= " + std::to_string(cores) +
                     ", or pass --allow-oversubscribe to run anyway (the run is then marked oversubscribed)"});
  return e;
}

int defaultThreads(const Config& c, int local_world_size) {
  // Measured on the 2-core CI machine: intra-op threads beyond the cores each process gets only
  // add contention; loader workers mostly sleep on the prefetch queue, so they do not count.
  const int cores = logicalCores();
  return std::max(1, cores / std::max(1, local_world_size));
}

}  // namespace wb::train
