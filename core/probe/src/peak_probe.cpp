#include "wb/probe/peak_probe.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include <torch/torch.h>
#include <torch/version.h>

#include "wb/common/clock.h"
#include "wb/common/config.h"
#include "wb/common/sysinfo.h"
#include "wb/model/flop_counter.h"
#include "wb/proto/capability_keys.h"
#include "wb/records/host.h"
#include "wb/train/machine_capabilities.h"

namespace wb::probe {
namespace {

constexpr double kSteadyWithin = 0.03;  // two consecutive windows this close: steady

struct Kernel {
  std::string kernel, precision, shape;
  std::function<void()> call;
};

void sync(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize();
}

// Repeats `k` in windows until two consecutive ones agree; the record of the last two.
Result<records::PeakKernel> timeKernel(const Kernel& k, const torch::Device& device, double seconds,
                                      const PeakProbeOptions& o) {
  auto count = model::countFlopsOf(k.call, 1);
  if (!count.ok()) return count.error();
  sync(device);
  Stopwatch once;
  k.call();
  sync(device);
  const double callS = std::max(1e-6, once.seconds());
  const double windowS = std::max(0.05, seconds / 4);
  const int64_t reps = std::max<int64_t>(1, static_cast<int64_t>(windowS / callS));
  std::vector<double> rates, times;
  Stopwatch all;
  do {
    if (o.stop && o.stop->load()) return makeError(Errc::Cancelled, "peak calibration cancelled");
    Stopwatch w;
    for (int64_t i = 0; i < reps; ++i) k.call();
    sync(device);
    times.push_back(w.seconds());
    rates.push_back(count->forward * static_cast<double>(reps) / times.back());
  } while (rates.size() < 2 ||
           (std::abs(rates.back() - rates[rates.size() - 2]) > kSteadyWithin * std::max(rates.back(), rates[rates.size() - 2]) &&
            all.seconds() < 3 * seconds));
  const size_t n = rates.size();
  records::PeakKernel r;
  r.kernel = k.kernel;
  r.precision = k.precision;
  r.shape = k.shape;
  r.flops_per_call = count->forward;
  r.calls = 2 * reps;
  r.seconds = times[n - 1] + times[n - 2];
  r.gflop_per_s = r.flops_per_call * static_cast<double>(r.calls) / r.seconds / 1e9;
  r.spread = std::abs(rates[n - 1] - rates[n - 2]) / std::max(rates[n - 1], rates[n - 2]);
  return r;
}

// A 3x3 same-padding convolution, NCHW contiguous as the trainer's models run it.
Kernel convKernel(const torch::TensorOptions& opt, const std::string& precision, int64_t batch, int64_t ch, int64_t side) {
  auto x = torch::randn({batch, ch, side, side}, opt);
  auto w = torch::randn({ch, ch, 3, 3}, opt);
  return {"conv", precision,
          "3x3 " + std::to_string(ch) + "->" + std::to_string(ch) + ", " + std::to_string(batch) + " x " +
              std::to_string(side) + " x " + std::to_string(side),
          [x, w] { torch::conv2d(x, w, {}, 1, 1); }};
}

// A square matrix product and ResNet-like 3x3 convolutions at `dtype`, sized for the device. On a
// CPU two convolutions: an early layer (64 channels, 56 x 56) and a deep one (256 channels,
// 14 x 14). oneDNN runs the deep one fastest (2-core EPYC: 323 GFLOP/s fp32 against OpenBLAS's
// 171 for the matrix product and 42 for the early layer), so the peak (the fastest of them) is
// not one kernel's. FLOPs are the direct count, as for the runs: a Winograd convolution does
// fewer and reads faster, on the same footing as a run's convolutions.
std::vector<Kernel> kernelsFor(const torch::Device& device, torch::ScalarType dtype, const std::string& precision) {
  const auto opt = torch::TensorOptions().dtype(dtype).device(device);
  const bool gpu = device.is_cuda();
  const int64_t n = gpu ? 8192 : 1024;
  auto a = torch::randn({n, n}, opt), b = torch::randn({n, n}, opt);
  const std::string ns = std::to_string(n);
  std::vector<Kernel> out = {{"matmul", precision, ns + " x " + ns + " x " + ns, [a, b] { torch::mm(a, b); }}};
  if (gpu) {
    out.push_back(convKernel(opt, precision, 64, 256, 28));
  } else {
    out.push_back(convKernel(opt, precision, 16, 64, 56));
    out.push_back(convKernel(opt, precision, 32, 256, 14));
  }
  return out;
}

Status measureKernels(records::PeakDevice& d, const torch::Device& device, torch::ScalarType dtype,
                      const std::string& precision, const PeakProbeOptions& o) {
  for (const auto& k : kernelsFor(device, dtype, precision)) {
    auto r = timeKernel(k, device, o.seconds, o);
    if (!r.ok()) return r.error();
    if (o.progress)
      o.progress(d.device + " " + k.kernel + " " + precision + ": " + wb::fmtFixed(r->gflop_per_s, 1) + " GFLOP/s");
    d.kernels.push_back(*r);
  }
  return {};
}

Result<records::PeakDevice> measureCpu(const PeakProbeOptions& o) {
  records::PeakDevice d;
  d.device = "cpu";
  d.name = cpuModel();
  const Config defaults;  // a named Config: a temporary trips GCC 12's -Wmaybe-uninitialized
  d.threads = train::defaultThreads(defaults, 1);
  at::set_num_threads(d.threads);
  if (auto st = measureKernels(d, torch::kCPU, torch::kFloat, "fp32", o); !st) return st.error();
  if (cpuHasFlag("avx512_bf16") || cpuHasFlag("amx_bf16")) {
    if (auto st = measureKernels(d, torch::kCPU, torch::kBFloat16, "bf16", o); !st) return st.error();
  } else {
    d.skipped.push_back({"bf16", "this CPU has no AVX-512 BF16 or AMX: bf16 is emulated through fp32 here, so it "
                                 "has no peak of its own"});
  }
  return d;
}

#if defined(WB_WITH_CUDA)
// fp32 with TF32 off, TF32 on (cuBLAS and cuDNN), then bf16 and fp16; the flags are restored.
Result<records::PeakDevice> measureCuda(const PeakProbeOptions& o, const std::string& name) {
  records::PeakDevice d;
  d.device = "cuda:0";
  d.name = name;
  const torch::Device dev(torch::kCUDA, 0);
  auto& ctx = at::globalContext();
  const bool blas = ctx.allowTF32CuBLAS(), dnn = ctx.allowTF32CuDNN();
  auto restore = [&] {
    ctx.setAllowTF32CuBLAS(blas);
    ctx.setAllowTF32CuDNN(dnn);
  };
  Status st;
  for (const auto& [precision, dtype, tf32] :
       std::vector<std::tuple<std::string, torch::ScalarType, bool>>{{"fp32", torch::kFloat, false},
                                                                   {"tf32", torch::kFloat, true},
                                                                   {"bf16", torch::kBFloat16, false},
                                                                   {"fp16", torch::kHalf, false}}) {
    ctx.setAllowTF32CuBLAS(tf32);
    ctx.setAllowTF32CuDNN(tf32);
    st = measureKernels(d, dev, dtype, precision, o);
    if (!st) break;
  }
  restore();
  if (!st) return st.error();
  return d;
}
#endif

}  // namespace

std::vector<std::string> machineGpus() {
  std::vector<std::string> names;
  const auto caps = train::capabilitiesJson();
  const auto& list = caps.value(proto::caps::kGpuNames, nlohmann::json::array());
  for (const auto& n : list)
    if (n.is_string()) names.push_back(n.get<std::string>());
  return names;
}

std::optional<records::PeakResult> storedPeak() { return records::loadPeak(records::thisMachine(), machineGpus()); }

Result<records::PeakResult> measurePeak(const PeakProbeOptions& o) {
  records::PeakResult r;
  const auto machine = records::thisMachine();
  r.host = machine.host;
  r.cpu = machine.cpu;
  r.cores = machine.cores;
  r.gpus = machineGpus();
  r.key = records::peakKey(machine, r.gpus);
  r.libtorch = TORCH_VERSION;
  torch::manual_seed(1);
  torch::NoGradGuard noGrad;
  Stopwatch clock;
  const CpuTimes cpuAt = readCpuTimes();
  try {
    auto cpu = measureCpu(o);
    if (!cpu.ok()) return cpu.error();
    r.devices.push_back(std::move(cpu.value()));
#if defined(WB_WITH_CUDA)
    if (o.cuda && torch::cuda::is_available() && !r.gpus.empty()) {
      auto gpu = measureCuda(o, r.gpus.front());
      if (!gpu.ok()) return gpu.error();
      r.devices.push_back(std::move(gpu.value()));
    }
#endif
  } catch (const c10::Error& e) {
    return makeError(Errc::Internal, std::string("peak calibration: ") + e.what_without_backtrace());
  }
  r.other_cores = cpuShareBetween(cpuAt, readCpuTimes()).other_cores;
  r.total_s = clock.seconds();
  r.measured_at = wb::utcNowIso();
  return r;
}

}  // namespace wb::probe
