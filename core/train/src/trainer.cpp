#include "wb/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include <torch/torch.h>
#include <torch/version.h>

#if defined(WB_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "wb/common/clock.h"
#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"
#include "wb/model/model.h"
#include "wb/proto/config_json.h"
#include "wb/train/backend_check.h"
#include "wb/train/checkpoint.h"
#include "wb/train/compat.h"
#include "wb/train/divergence.h"
#include "wb/train/early_stopping.h"
#include "wb/train/grad_scaler.h"
#include "wb/train/host_use.h"
#include "wb/train/optim.h"
#include "wb/train/step_timer.h"
#include "wb/train/sync.h"

namespace wb::train {
using nlohmann::json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Machine facts

namespace {

bool cudaAvailable() { return torch::cuda::is_available(); }
int cudaDevices() { return cudaAvailable() ? static_cast<int>(torch::cuda::device_count()) : 0; }

bool ncclAvailable() {
#if defined(WB_WITH_CUDA)
  return cudaAvailable();
#else
  return false;
#endif
}

std::string cudnnVersion() {
  try {
    if (cudaAvailable() && at::detail::getCUDAHooks().hasCuDNN())
      return std::to_string(at::detail::getCUDAHooks().versionCuDNN());
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace

json versionsJson() {
  json v;
  v["libtorch"] = TORCH_VERSION;
  v["cuda"] = cudaAvailable() ? at::detail::getCUDAHooks().showConfig().substr(0, 0) + "available" : "";
#if defined(WB_WITH_CUDA) && defined(CUDA_VERSION)
  v["cuda"] = std::to_string(CUDA_VERSION / 1000) + "." + std::to_string((CUDA_VERSION % 1000) / 10);
#endif
  v["cudnn"] = cudnnVersion();
  v["nccl"] = ncclAvailable() ? "available" : "";
  return v;
}

json capabilitiesJson() {
  const bool cuda = cudaAvailable();
  const int gpus = cudaDevices();
  const int cores = logicalCores();
  json gpuNames = json::array();
  json c;
  c["libtorch"] = TORCH_VERSION;
  c["cuda"] = cuda;
  c["gpus"] = gpus;
  c["gpu_names"] = gpuNames;
  c["cores"] = cores;
  c["nccl"] = ncclAvailable();
  c["gloo"] = true;
  c["models"] = model::builtinModels();
  json s;
  s["workers"] = {{"available", true},
                  {"default", std::min(cores, 8)},
                  {"max", 64},
                  {"note", "Decode/augment threads with ordered prefetch; 0 loads inside the training loop"}};
  s["pin_memory"] = cuda ? json{{"available", true},
                                {"note", "Pinned staging buffers and non-blocking host-to-device copies"}}
                         : json{{"available", false}, {"note", "needs CUDA; not available on this machine"}};
  s["devices"] = cuda ? json{{"available", true}, {"max", gpus}, {"kind", "gpus"},
                             {"note", "One process per GPU, gradients all-reduced over NCCL"}}
                      : json{{"available", true}, {"max", std::max(1, cores)}, {"kind", "cpu-processes"},
                             {"note", "One CPU process per device over Gloo; the cores are shared, so "
                                      "expect little speedup from more processes than cores"}};
  json prec;
  prec["32-true"] = {{"available", true}, {"note", "fp32 everywhere"}};
  // Without AVX-512 BF16 or AMX, LibTorch's CPU bf16 kernels convert to fp32 and back: measured
  // 5x (mnist-cnn) to 25x (resnet18) slower than fp32 on an AVX2 EPYC (tests/bench/bench_speedups).
  const bool bf16Native = cuda || cpuHasFlag("avx512_bf16") || cpuHasFlag("amx_bf16");
  prec["bf16-mixed"] = {{"available", true},
                        {"native", bf16Native},
                        {"note", cuda ? "bf16 autocast on the GPU"
                                 : bf16Native ? "bf16 autocast on the CPU (AVX-512 BF16 / AMX)"
                                              : "bf16 autocast on the CPU; this CPU has no AVX-512 BF16 or AMX, so "
                                                "bf16 is emulated and runs several times slower than fp32 here"}};
  prec["16-mixed"] = cuda ? json{{"available", true}, {"note", "fp16 autocast with dynamic loss scaling"}}
                          : json{{"available", false}, {"note", "needs CUDA; use bf16-mixed on CPU"}};
  s["precision"] = {{"available", true}, {"values", prec}};
  s["early_stopping"] = {{"available", true},
                         {"note", "Stops when the monitored metric stops improving; restores the best weights"}};
  s["sharding"] = {{"available", true},
                   {"note", cuda ? "ZeRO-1/2 over NCCL (needs devices > 1)"
                                 : "ZeRO-1/2 over Gloo (needs devices > 1); Gloo has no reduce-scatter, so "
                                   "ZeRO-2's gradient-memory saving does not apply"}};
  s["inference_eval"] = {{"available", true},
                         {"note", "Evaluate under InferenceMode with the larger eval batch"}};
  c["speedups"] = s;
  return c;
}

std::vector<FieldError> machineConfigErrors(const Config& c, int world_size) {
  std::vector<FieldError> e;
  const bool cuda = cudaAvailable();
  if (c.speedups.precision == "16-mixed" && !cuda)
    e.push_back({"speedups.precision", "\"16-mixed\"",
                 "fp16 needs CUDA and this machine has none; use bf16-mixed on CPU"});
  if (cuda && c.speedups.devices > cudaDevices() && world_size <= 1)
    e.push_back({"speedups.devices", std::to_string(c.speedups.devices),
                 "this machine has " + std::to_string(cudaDevices()) + " GPU(s)"});
  return e;
}

int defaultThreads(const Config& c, int local_world_size) {
  // Measured on the 2-core CI machine: intra-op threads beyond the cores each process gets only
  // add contention; loader workers mostly sleep on the prefetch queue, so they do not count.
  const int cores = logicalCores();
  return std::max(1, cores / std::max(1, local_world_size));
}

// ---------------------------------------------------------------------------------------------

namespace {

json memoryJson(const torch::Device& device) {
  json m;
  m["rss"] = currentRssBytes();
  m["rss_peak"] = peakRssBytes();
#if defined(WB_WITH_CUDA)
  if (device.is_cuda()) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    using c10::cuda::CUDACachingAllocator::StatType;
    const auto agg = static_cast<size_t>(StatType::AGGREGATE);
    m["device"] = "cuda:" + std::to_string(device.index());
    m["alloc"] = stats.allocated_bytes[agg].current;
    m["reserved"] = stats.reserved_bytes[agg].current;
    m["peak"] = stats.allocated_bytes[agg].peak;
    return m;
  }
#endif
  m["device"] = "cpu";
  m["alloc"] = m["rss"];
  m["reserved"] = m["rss"];
  m["peak"] = m["rss_peak"];
  return m;
}

void resetPeakMemory(const torch::Device& device) {
#if defined(WB_WITH_CUDA)
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  resetPeakRss();
}

json speedupStatus(bool requested, bool active, const std::string& note) {
  return json{{"requested", requested}, {"active", active}, {"note", note}};
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Trainer::Impl {
  TrainerOptions o;
  proto::EventSink& sink;
  Stopwatch clock;
  torch::Device device{torch::kCPU};

  Impl(TrainerOptions opts, proto::EventSink& s) : o(std::move(opts)), sink(s) {}

  json event(const std::string& type) const { return proto::makeEvent(type, o.rank, clock.seconds()); }
  void emit(const json& ev) { sink.write(ev); }
  void warn(const std::string& message, const std::string& path = "") {
    json ev = event("warning");
    ev["message"] = message;
    if (!path.empty()) ev["path"] = path;
    emit(ev);
  }
  bool stopRequested() const { return o.stop_flag && o.stop_flag->load(); }
  // Every rank must stop at the same step, or the next collectives mismatch (one rank in the
  // gradient all-reduce, another writing its checkpoint: Gloo "connection reset"). The signal
  // reaches ranks at different moments, so with more than one rank they agree on it at every
  // `every`-th iteration (the same on all ranks): one small all-reduce per log interval, not a
  // device sync per step.
  bool stopAgreed(GradSync* gs, int64_t iteration, int64_t every) const {
    if (!gs) return stopRequested();
    if (iteration % std::max<int64_t>(1, every) != 0) return false;
    double flag = stopRequested() ? 1.0 : 0.0;
    gs->allReduceSum(&flag, 1);
    return flag > 0;
  }
  bool isMain() const { return o.rank == 0; }

  Result<TrainOutcome> run();
};

Trainer::Trainer(TrainerOptions options, proto::EventSink& sink)
    : impl_(std::make_unique<Impl>(std::move(options), sink)) {}
Trainer::~Trainer() = default;
Result<TrainOutcome> Trainer::run() { return impl_->run(); }

namespace {

struct EvalResult {
  double loss = 0;
  double acc = 0;
  int64_t samples = 0;
  double ms = 0;
  json mem;
};

// Evaluation over this rank's shard of the validation set; sums are reduced across ranks.
EvalResult evaluate(model::Model& m, data::Loader& loader, const torch::Device& device, bool inference,
                    bool bf16, GradSync* sync) {
  Stopwatch sw;
  resetPeakMemory(device);
  m.train(false);
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  torch::Tensor correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
  int64_t count = 0;
  loader.startEpoch(0);
  auto body = [&](const data::Batch& b) {
    auto x = b.x.to(device, /*non_blocking=*/true);
    auto y = b.y.to(device, /*non_blocking=*/true);
    compat::AutocastGuard autocast(device.type(), torch::kBFloat16, bf16);
    auto logits = m.forward(x).to(torch::kFloat);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .detach()
                    .to(torch::kDouble);
    correct += logits.argmax(1).eq(y).sum();
    count += b.x.size(0);
  };
  while (auto b = loader.next()) {
    if (inference) {
      torch::InferenceMode guard;
      body(*b);
    } else {
      // What a naive loop does: autograd stays on, so every activation is kept for a backward
      // that never comes.
      body(*b);
    }
  }
  double sums[3] = {loss_sum.item<double>(), static_cast<double>(correct.item<int64_t>()),
                    static_cast<double>(count)};
  if (sync) sync->allReduceSum(sums, 3);
  m.train(true);
  EvalResult r;
  r.samples = static_cast<int64_t>(sums[2]);
  r.loss = sums[2] > 0 ? sums[0] / sums[2] : std::nan("");
  r.acc = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  r.ms = sw.ms();
  r.mem = memoryJson(device);
  return r;
}

}  // namespace

Result<TrainOutcome> Trainer::Impl::run() {
  const Config& c = o.config;

  if (auto errs = machineConfigErrors(c, o.world_size); !errs.empty())
    return makeError(Errc::InvalidConfig, formatFieldErrors(errs));
  if (o.world_size > 1 && !o.comm)
    return makeError(Errc::Internal, "rank " + std::to_string(o.rank) + ": world size " +
                                         std::to_string(o.world_size) + " without a communicator");

  // ---- machine set-up
  const std::string memoryNote = keepFreedMemory();
  const bool autoThreads = c.train.threads <= 0;
  const int threads =
      autoThreads ? defaultThreads(c, o.local_world_size > 0 ? o.local_world_size : o.world_size) : c.train.threads;
  at::set_num_threads(threads);
  auto backend = checkBackend(o.comm);  // may switch oneDNN off; fails on a build that computes wrong
  if (!backend.ok()) return backend.error();
  const bool cuda = cudaAvailable();
  if (cuda) device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(o.local_rank % cudaDevices()));
  torch::manual_seed(c.seed);

  // ---- data
  auto splits = data::openSplits(c.data, c.seed);
  if (!splits.ok()) return splits.error();
  const auto& tinfo = splits->train->info();
  int image_size = c.data.image_size > 0 ? c.data.image_size : tinfo.height;
  if (image_size <= 0 || (c.data.image_size == 0 && tinfo.height != tinfo.width))
    return makeError(Errc::InvalidConfig,
                     "data.image_size: 0 \u2014 the images of " + c.data.dataset +
                         " vary in size; set data.image_size (e.g. 64)");
  const bool isFolder = c.data.dataset.rfind("folder:", 0) == 0;
  const bool pinActive = c.speedups.pin_memory && cuda;

  data::LoaderOptions lo;
  lo.batch_size = c.train.batch_size;
  lo.workers = c.speedups.workers;
  lo.shuffle = true;
  lo.seed = c.seed;
  lo.rank = o.rank;
  lo.world_size = o.world_size;
  lo.pin_memory = pinActive;
  lo.max_bad_fraction = c.data.max_bad_fraction;
  lo.transform.augment = true;
  lo.transform.crop_padding = c.data.augment.crop_padding;
  lo.transform.hflip = c.data.augment.hflip;
  lo.transform.image_size = c.data.image_size;
  lo.transform.random_resized_crop = isFolder && c.data.image_size > 0;
  lo.transform.normalize = c.data.augment.normalize;
  data::Loader trainLoader(splits->train, lo);

  data::LoaderOptions vo = lo;
  vo.shuffle = false;
  vo.transform.augment = false;
  vo.transform.random_resized_crop = false;
  vo.batch_size = c.speedups.inference_eval ? c.train.eval_batch_size : c.train.batch_size;
  data::Loader valLoader(splits->val, vo);

  auto onWarning = [this](const std::string& message, const std::string& path) { warn(message, path); };
  trainLoader.setWarningHandler(onWarning);
  valLoader.setWarningHandler(onWarning);

  // ---- model, optimiser, schedule
  auto created = model::createModel({c.model.name, tinfo.channels, tinfo.num_classes, image_size});
  if (!created.ok()) return created.error();
  std::unique_ptr<model::Model> net = std::move(created.value());
  net->to(device);
  net->train(true);

  const int64_t stepsPerEpoch = trainLoader.batchesPerEpoch();
  if (stepsPerEpoch == 0)
    return makeError(Errc::Data, "data: the training split has " + std::to_string(splits->train->size()) +
                                     " samples, fewer than one batch per rank; lower train.batch_size "
                                     "or raise data.limit_train");
  int64_t totalSteps = stepsPerEpoch * c.train.epochs;
  if (c.train.max_steps > 0) totalSteps = std::min(totalSteps, c.train.max_steps);

  auto sync = makeGradSync(c, o.comm, *net, device);
  if (!sync.ok()) return sync.error();
  GradSync* gs = sync->get();

  auto optimizer = gs ? gs->makeOptimizer(c.optim) : makeOptimizer(c.optim, net->parameters());
  if (!optimizer.ok()) return optimizer.error();
  std::unique_ptr<torch::optim::Optimizer> opt = std::move(optimizer.value());
  LrSchedule schedule(c.optim, totalSteps, stepsPerEpoch);

  const bool bf16 = c.speedups.precision == "bf16-mixed";
  const bool fp16 = c.speedups.precision == "16-mixed" && cuda;
  const at::ScalarType autocastType = fp16 ? torch::kHalf : torch::kBFloat16;
  GradScalerOptions so;
  so.enabled = fp16;
  GradScaler scaler(so, device);
  if (gs && scaler.enabled()) scaler.setFoundInfReducer([gs](double* v) { gs->allReduceSum(v, 1); });
  EarlyStopping stopper(c.speedups.early_stopping);

  // ---- resume
  int startEpoch = 0;
  int64_t skipBatches = 0, optSteps = 0, iteration = 0, samplesSeen = 0;
  double bestMetric = std::nan("");
  std::string resumeNote;
  if (!o.resume_from.empty()) {
    auto ck = loadCheckpoint(o.resume_from);
    if (!ck.ok()) return ck.error();
    if (auto st = net->loadState(ck->params, ck->buffers); !st.ok())
      return makeError(Errc::Checkpoint, o.resume_from + ": " + st.error().message +
                                             " (the checkpoint was written for another model; start a new run)");
    const json written = json::parse(ck->config_json, nullptr, false);
    // Optimiser state belongs to one optimiser: another one cannot take it (LibTorch asserts).
    const std::string wasOptim =
        written.is_object() ? written.value(json::json_pointer("/optim/name"), std::string()) : std::string();
    if (!wasOptim.empty() && wasOptim != c.optim.name)
      return makeError(Errc::InvalidConfig, "optim.name: " + o.resume_from + " was written by " + wasOptim +
                                                " and this run asks for " + c.optim.name +
                                                "; resume with the same optimiser (--set optim.name=" + wasOptim +
                                                "), or start a new run to change it");
    auto optLoad = gs ? gs->loadOptimizerState(*opt, ck->optimizer_state)
                      : loadOptimizerStateBytes(*opt, ck->optimizer_state);
    if (!optLoad.ok()) return optLoad.error();
    scaler.loadState(ck->scaler);
    stopper.loadState(ck->early_stopping);
    if (ck->rng_state.defined()) {
      at::Generator gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(ck->rng_state);
    }
    startEpoch = ck->epoch;
    skipBatches = ck->batch_in_epoch;
    optSteps = ck->global_step;
    samplesSeen = ck->samples_seen;
    iteration = ck->extra.count("iteration") ? static_cast<int64_t>(ck->extra.at("iteration")) : optSteps;
    if (ck->extra.count("best_metric")) bestMetric = ck->extra.at("best_metric");
    if (startEpoch >= c.train.epochs && skipBatches == 0)
      return makeError(Errc::InvalidConfig, "train.epochs: " + o.resume_from + " has already trained " +
                                                std::to_string(startEpoch) + " epoch(s) and this run asks for " +
                                                std::to_string(c.train.epochs) +
                                                "; resume with --set train.epochs=N (N > " + std::to_string(startEpoch) +
                                                ") to train further");
    // Written by another number of ranks (or batch size): a step there is another number of
    // samples here. Continue at the same sample in the epoch, and the schedule at the same share.
    const int64_t wasGlobalBatch = written.is_object()
                                       ? written.value(json::json_pointer("/train/batch_size"), int64_t{0}) *
                                             written.value(json::json_pointer("/speedups/devices"), int64_t{1})
                                       : 0;
    const int64_t globalBatch = static_cast<int64_t>(c.train.batch_size) * o.world_size;
    if (wasGlobalBatch > 0 && wasGlobalBatch != globalBatch) {
      skipBatches = skipBatches * wasGlobalBatch / globalBatch;
      iteration = startEpoch * stepsPerEpoch + skipBatches;
      optSteps = iteration;
      resumeNote = "the checkpoint was written with a global batch of " + std::to_string(wasGlobalBatch) +
                   " and this run's is " + std::to_string(globalBatch) + " (" + std::to_string(o.world_size) +
                   " rank(s) x " + std::to_string(c.train.batch_size) +
                   "): it continues at the same sample of epoch " + std::to_string(startEpoch + 1) +
                   " and the same point of the LR schedule, in steps of the new batch";
    }
  }

  // ---- start event
  {
    json ev = event("start");
    ev["config"] = proto::configToJson(c);
    ev["versions"] = versionsJson();
    ev["backend_check"] = backend->toJson();
    ev["host"] = {{"name", hostName()}, {"cpu", cpuModel()}, {"cores", logicalCores()}};
    ev["device"] = device.str();
    ev["threads"] = threads;
    ev["host_use"] = {{"memory", memoryNote},
                      {"threads", autoThreads ? "automatic: the cores this rank's share of the machine has, fewer "
                                                "while other processes take cores"
                                              : "fixed by train.threads"}};
    ev["world_size"] = o.world_size;
    ev["local_rank"] = o.local_rank;
    ev["model"] = {{"name", net->name()}, {"parameters", net->parameterCount()}};
    ev["dataset"] = {{"name", tinfo.name},          {"train", splits->train->size()},
                     {"val", splits->val->size()},  {"classes", tinfo.num_classes},
                     {"channels", tinfo.channels},  {"image_size", image_size}};
    ev["steps_per_epoch"] = stepsPerEpoch;
    ev["total_steps"] = totalSteps;
    ev["batch"] = {{"per_rank", c.train.batch_size},
                   {"global", c.train.batch_size * o.world_size},
                   {"note", "train.batch_size is per rank; the global batch is batch_size x devices"}};
    if (!o.resume_from.empty()) ev["resumed_from"] = {{"path", o.resume_from}, {"epoch", startEpoch + 1},
                                                      {"batch_in_epoch", skipBatches}, {"step", iteration}};
    json s;
    s["workers"] = speedupStatus(c.speedups.workers > 0, c.speedups.workers > 0,
                                 std::to_string(c.speedups.workers) + " loader thread(s)" +
                                     (c.speedups.workers == 0 ? ": loading inside the training loop" : ""));
    s["pin_memory"] = speedupStatus(c.speedups.pin_memory, pinActive,
                                    pinActive ? "pinned staging buffers, non-blocking copies"
                                    : c.speedups.pin_memory ? "not available: needs CUDA (this is a CPU run)"
                                                            : "off");
    s["devices"] = speedupStatus(c.speedups.devices > 1, o.world_size > 1,
                                 std::to_string(o.world_size) + (cuda ? " GPU process(es), NCCL" : " CPU process(es), Gloo"));
    s["precision"] = speedupStatus(c.speedups.precision != "32-true", bf16 || fp16,
                                   fp16 ? "fp16 autocast + dynamic loss scaling"
                                   : bf16 ? std::string("bf16 autocast on ") + (cuda ? "CUDA" : "CPU")
                                          : "fp32");
    s["early_stopping"] = speedupStatus(stopper.enabled(), stopper.enabled(),
                                        stopper.enabled() ? "monitor " + c.speedups.early_stopping.monitor +
                                                                ", patience " +
                                                                std::to_string(c.speedups.early_stopping.patience)
                                                          : "off");
    s["sharding"] = gs ? gs->shardingStatus() : speedupStatus(c.speedups.sharding != "off", false, "off");
    s["inference_eval"] = speedupStatus(c.speedups.inference_eval, c.speedups.inference_eval,
                                        c.speedups.inference_eval
                                            ? "InferenceMode, eval batch " + std::to_string(c.train.eval_batch_size)
                                            : "autograd on, train batch size (a naive loop)");
    ev["speedups"] = s;
    if (gs) ev["dist"] = gs->describe();
    emit(ev);
    if (backend->mkldnn_disabled) warn(backend->detail);
    if (!resumeNote.empty()) warn(resumeNote);
    if (c.speedups.pin_memory && !pinActive)
      warn("speedups.pin_memory: pinned memory needs CUDA; this run copies from pageable memory (no effect on CPU)");
  }

  // ---- checkpoints
  const bool writeCheckpoints = !o.run_dir.empty() && isMain();
  fs::path ckDir = fs::path(o.run_dir) / "checkpoints";
  if (writeCheckpoints) removeStaleTemporaries(ckDir.string());  // from writers killed in an earlier life
  auto writeCheckpoint = [&](const std::string& kind, int epoch, int64_t batchInEpoch) -> Status {
    CheckpointData d;
    d.config_json = proto::configToJson(c).dump();
    d.epoch = epoch;
    d.batch_in_epoch = batchInEpoch;
    d.global_step = optSteps;
    d.samples_seen = samplesSeen;
    d.params = net->namedParameters();
    d.buffers = net->namedBuffers();
    d.optimizer_state = gs ? gs->consolidatedOptimizerState(*opt) : optimizerStateBytes(*opt);
    d.scaler = scaler.state();
    d.early_stopping = stopper.state();
    d.extra["iteration"] = static_cast<double>(iteration);
    if (!std::isnan(bestMetric)) d.extra["best_metric"] = bestMetric;
    {
      at::Generator gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      d.rng_state = gen.get_state();
    }
    if (!writeCheckpoints) return {};
    std::error_code ec;
    fs::create_directories(ckDir, ec);
    const std::string path = (ckDir / (kind + ".pt")).string();
    auto st = saveCheckpoint(path, d);
    if (!st.ok()) return st;
    json ev = event("checkpoint");
    ev["kind"] = kind;
    ev["path"] = path;
    ev["epoch"] = epoch;  // epochs completed when batch_in_epoch is 0
    ev["batch_in_epoch"] = batchInEpoch;
    ev["step"] = iteration;
    emit(ev);
    return {};
  };
  double checkpointS = 0;
  std::string checkpointError;  // the first checkpoint not written: the run then ends `failed`
  // A checkpoint that is not written is a warning at once and fails the run at its end (the
  // weights it promised are not on disk), after training on: a later save may still succeed.
  auto checkpoint = [&](const std::string& kind, int epoch, int64_t batchInEpoch) {
    Stopwatch took;
    Status st = writeCheckpoint(kind, epoch, batchInEpoch);
    checkpointS += took.seconds();
    if (st.ok()) return;
    const std::string why = kind + ".pt was not written: " + st.error().message +
                            " (free space or fix permissions in " + ckDir.string() + ", then run again)";
    warn(why, (ckDir / (kind + ".pt")).string());
    if (checkpointError.empty()) checkpointError = why;
  };

  // ---- the loop
  const int64_t samplesAtStart = samplesSeen;
  Stopwatch wall;
  StepTimer timer(device);
  CpuMonitor cpu({threads, autoThreads, logicalCores(), o.local_world_size > 0 ? o.local_world_size : o.world_size});
  double trainMs = 0, evalS = 0;           // time in training steps; in evaluation
  double firstStepAge = -1, firstStepUnix = 0;
  int64_t faultsAt = minorPageFaults();
  torch::Tensor lossAcc = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  torch::Tensor epochLossAcc = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  // First non-finite loss: its iteration and value, tracked on the device without a sync.
  torch::Tensor firstBad = torch::full({2}, -1.0, torch::TensorOptions().dtype(torch::kDouble).device(device));
  int64_t intervalSteps = 0, intervalSamples = 0, epochSteps = 0;
  std::string status = proto::kStatusOk;
  std::string message;
  double lastValAcc = std::nan(""), bestValAcc = std::nan(""), bestValLoss = std::nan("");
  int epochsRun = 0;
  bool stopTraining = false;
  int64_t peakBytes = 0;

  // fp16: an overflowing step is skipped and the scale halves; a loss that stays non-finite shows
  // as a streak of skips or a scale below 1 (65536 halves below 1 after 17 straight overflows).
  constexpr int64_t kMaxConsecutiveSkips = 25;
  int64_t streakStart = -1;
  double streakLoss = 0;
  auto fp16Diverged = [&](bool readScale) -> bool {
    if (!scaler.enabled()) return false;
    const int64_t streak = scaler.consecutiveSkips();
    const double scale = readScale ? scaler.readScale() : 1.0;
    if (streak < kMaxConsecutiveSkips && !(readScale && scale < 1.0)) return false;
    status = proto::kStatusDiverged;
    message = "fp16 loss scaling gave up: " + std::to_string(streak) + " consecutive overflowing steps from step " +
              std::to_string(streakStart) + " (loss " + fmt(streakLoss) + "), scale " + fmt(scaler.readScale()) +
              "; " + divergenceAdvice(c.speedups.precision);
    return true;
  };

  auto checkDiverged = [&]() -> bool {
    if (fp16Diverged(true)) return true;
    if (fp16) return false;  // under fp16 a non-finite loss is a skipped step; the scaler decides
    auto bad = firstBad.cpu();
    const double badStep = bad[0].item<double>();
    if (badStep < 0) return false;
    status = proto::kStatusDiverged;
    message = "loss became non-finite at step " + std::to_string(static_cast<int64_t>(badStep)) + " (loss " +
              fmt(bad[1].item<double>()) + "); " + divergenceAdvice(c.speedups.precision);
    return true;
  };

  auto emitStep = [&](int epoch) {
    const double intervalMs = timer.totalMs();
    trainMs += intervalMs;
    if (intervalSteps == 0) {
      timer.reset();
      return;
    }
    double lossSums[2] = {lossAcc.item<double>(), static_cast<double>(intervalSteps)};
    if (gs) gs->allReduceSum(lossSums, 2);  // the loss over every rank's samples
    const double lossMean = lossSums[0] / lossSums[1];
    json ev = event("step");
    ev["epoch"] = epoch + 1;
    ev["step"] = iteration;
    ev["samples"] = samplesSeen;
    ev["loss"] = lossMean;
    ev["lr"] = schedule.lrAt(std::max<int64_t>(0, optSteps - 1));
    const auto split = timer.averages(intervalSteps);
    ev["samples_per_s"] = intervalMs > 0 ? intervalSamples * 1000.0 / intervalMs : 0.0;
    ev["ms"] = split;
    ev["step_ms"] = intervalMs / static_cast<double>(intervalSteps);
    auto mem = memoryJson(device);
    peakBytes = std::max<int64_t>(peakBytes, mem.value("peak", int64_t{0}));
    const int64_t faults = minorPageFaults();
    mem["page_faults_per_step"] = static_cast<double>(faults - faultsAt) / static_cast<double>(intervalSteps);
    faultsAt = faults;
    ev["mem"] = mem;
    ev["cpu"] = cpu.intervalJson();
    if (gs) ev["comm"] = gs->stats();
    if (scaler.enabled()) ev["amp"] = {{"scale", scaler.readScale()}, {"skipped", scaler.skippedSteps()}};
    ev["progress"] = totalSteps > 0 ? static_cast<double>(iteration) / static_cast<double>(totalSteps) : 0.0;
    const double elapsed = wall.seconds();
    const int64_t done = iteration - (startEpoch * stepsPerEpoch + skipBatches);
    ev["eta_s"] = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(totalSteps - iteration) : 0.0;
    emit(ev);
    lossAcc.zero_();
    intervalSteps = 0;
    intervalSamples = 0;
    timer.reset();
  };

  for (int epoch = startEpoch; epoch < c.train.epochs && !stopTraining; ++epoch) {
    Stopwatch epochClock;
    resetPeakMemory(device);
    trainLoader.startEpoch(epoch, skipBatches);
    int64_t batchInEpoch = skipBatches;
    skipBatches = 0;
    epochSteps = 0;
    epochLossAcc.zero_();
    int64_t epochSamples = 0;
    const double epochTrainMsAt = trainMs;
    timer.reset();
    faultsAt = minorPageFaults();
    try {
      for (;;) {
        if (stopAgreed(gs, iteration, c.train.log_every)) {
          status = proto::kStatusCancelled;
          stopTraining = true;
          break;
        }
        if (c.train.max_steps > 0 && iteration >= c.train.max_steps) {
          stopTraining = true;
          break;
        }
        if (auto note = cpu.poll()) warn(*note);
        timer.setSampled((iteration + 1) % c.train.log_every == 0);
        timer.begin();
        auto batch = trainLoader.next();
        timer.mark(StepTimer::Data);
        if (!batch) break;
        auto x = batch->x.to(device, /*non_blocking=*/pinActive);
        auto y = batch->y.to(device, /*non_blocking=*/pinActive);
        timer.mark(StepTimer::H2D);
        if (gs) gs->syncBuffers();
        torch::Tensor loss;
        {
          compat::AutocastGuard autocast(device.type(), autocastType, bf16 || fp16);
          auto logits = net->forward(x);
          loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), y);
        }
        timer.mark(StepTimer::Fwd);
        opt->zero_grad();
        if (gs) gs->prepareBackward();
        (scaler.enabled() ? scaler.scale(loss) : loss).backward();
        if (bf16 || fp16) compat::clearAutocastCache();
        timer.mark(StepTimer::Bwd);
        if (gs) {
          gs->finishBackward();
          timer.mark(StepTimer::Comm);
        }
        setLearningRate(*opt, schedule.lrAt(optSteps));
        bool stepped = true;
        if (scaler.enabled()) {
          stepped = scaler.step(*opt);  // syncs once to decide, so reading the loss here is free
          scaler.update();
          if (!stepped && scaler.consecutiveSkips() == 1) {
            streakStart = iteration + 1;
            streakLoss = loss.detach().item<double>();
          }
        } else {
          opt->step();
        }
        if (stepped) ++optSteps;  // an overflowing fp16 step skips the optimiser and the schedule
        auto detached = loss.detach();
        lossAcc += detached;
        epochLossAcc += detached.to(torch::kDouble);
        auto badNow = torch::logical_and(firstBad[0] < 0, torch::logical_not(torch::isfinite(detached)));
        firstBad.copy_(torch::where(badNow, torch::stack({torch::full({}, static_cast<double>(iteration + 1), firstBad.options()),
                                                          detached.to(torch::kDouble)}),
                                    firstBad));
        timer.mark(StepTimer::Opt);
        if (firstStepAge < 0) firstStepAge = processAgeSeconds(), firstStepUnix = unixSeconds();
        ++iteration;
        ++batchInEpoch;
        ++intervalSteps;
        ++epochSteps;
        const int64_t globalSamples = batch->x.size(0) * o.world_size;
        intervalSamples += globalSamples;
        epochSamples += globalSamples;
        samplesSeen += globalSamples;
        if (fp16Diverged(false) || iteration % c.train.log_every == 0) {
          emitStep(epoch);
          if (checkDiverged()) {
            stopTraining = true;
            break;
          }
        }
      }
    } catch (const data::DataError& e) {
      return makeError(Errc::Data, e.what());
    }
    emitStep(epoch);
    if (!stopTraining || status == proto::kStatusCancelled) {
      if (checkDiverged()) stopTraining = true;
    }
    if (status == proto::kStatusCancelled) {
      // Keep the position so `run --resume` continues exactly here.
      checkpoint("last", epoch, batchInEpoch);
      break;
    }
    if (status == proto::kStatusDiverged) break;
    const bool epochComplete = batchInEpoch >= stepsPerEpoch;
    epochsRun = epoch + 1;

    // ---- evaluation
    EvalResult ev;
    try {
      ev = evaluate(*net, valLoader, device, c.speedups.inference_eval, bf16, gs);
    } catch (const data::DataError& e) {
      return makeError(Errc::Data, e.what());
    }
    evalS += ev.ms / 1000.0;
    lastValAcc = ev.acc;
    if (std::isnan(bestValAcc) || ev.acc > bestValAcc) bestValAcc = ev.acc;
    if (std::isnan(bestValLoss) || ev.loss < bestValLoss) bestValLoss = ev.loss;
    peakBytes = std::max<int64_t>(peakBytes, ev.mem.value("peak", int64_t{0}));
    {
      json e = event("eval");
      e["epoch"] = epoch + 1;
      e["step"] = iteration;
      e["samples"] = samplesSeen;
      e["val_loss"] = ev.loss;
      e["val_acc"] = ev.acc;
      e["eval_ms"] = ev.ms;
      e["eval_samples"] = ev.samples;
      e["inference_mode"] = c.speedups.inference_eval;
      e["mem"] = ev.mem;
      emit(e);
      json ep = event("epoch");
      ep["epoch"] = epoch + 1;
      ep["seconds"] = epochClock.seconds();
      const double epochTrainS = (trainMs - epochTrainMsAt) / 1000.0;  // training steps only
      ep["train_seconds"] = epochTrainS;
      ep["samples"] = epochSamples;
      ep["train_samples_per_s"] = epochTrainS > 0 ? epochSamples / epochTrainS : 0.0;
      ep["samples_per_s"] = ep["train_samples_per_s"];  // older readers' name for the same figure
      ep["train_loss"] = epochSteps > 0 ? epochLossAcc.item<double>() / static_cast<double>(epochSteps) : std::nan("");
      ep["complete"] = epochComplete;
      emit(ep);
    }

    // ---- early stopping and checkpoints
    const double monitored = c.speedups.early_stopping.monitor == "val_acc" ? ev.acc : ev.loss;
    EarlyStoppingDecision decision;
    if (stopper.enabled()) {
      decision = stopper.update(epoch + 1, monitored);
    } else {
      const bool better = std::isnan(bestMetric) ||
                          (c.speedups.early_stopping.mode == "max" ? monitored > bestMetric : monitored < bestMetric);
      decision.improved = better && std::isfinite(monitored);
    }
    if (decision.improved) {
      bestMetric = monitored;
      checkpoint("best", epoch + 1, 0);
    }
    checkpoint("last", epochComplete ? epoch + 1 : epoch, epochComplete ? 0 : batchInEpoch);
    if (decision.stop) {
      status = proto::kStatusEarlyStopped;
      json es = event("early_stop");
      es["reason"] = decision.reason;
      es["best_epoch"] = stopper.bestEpoch();
      es["best_value"] = stopper.bestValue();
      es["monitor"] = c.speedups.early_stopping.monitor;
      es["epochs_saved"] = c.train.epochs - (epoch + 1);
      emit(es);
      stopTraining = true;
    }
  }

  // Early stopping restores the best weights (and best.pt already holds them).
  if (status == proto::kStatusEarlyStopped && writeCheckpoints) {
    auto best = loadCheckpoint((ckDir / "best.pt").string());
    if (best.ok()) (void)net->loadState(best->params, best->buffers);
  }

  if (!checkpointError.empty()) {
    status = proto::kStatusFailed;
    message = checkpointError;
  }
  TrainOutcome out;
  out.status = status;
  out.message = message;
  json& s = out.summary;
  s["epochs"] = epochsRun;
  s["steps"] = iteration;
  s["optimizer_steps"] = optSteps;
  s["samples"] = samplesSeen;
  s["wall_s"] = wall.seconds();
  // This life's samples over this life's training steps (samples_seen includes a resumed run's
  // earlier ones; evaluation and checkpoints have their own clocks).
  const int64_t trainSamples = samplesSeen - samplesAtStart;
  s["train_samples"] = trainSamples;
  s["train_s"] = trainMs / 1000.0;
  s["train_samples_per_s"] = trainMs > 0 ? trainSamples / (trainMs / 1000.0) : 0.0;
  s["eval_s"] = evalS;
  s["checkpoint_s"] = checkpointS;
  if (firstStepAge >= 0) {
    s["time_to_first_step_s"] = firstStepAge;  // from this process's start; a launcher counts from its own
    s["first_step_unix"] = firstStepUnix;
  }
  s["cpu"] = cpu.totalJson();
  s["best_val_acc"] = bestValAcc;
  s["final_val_acc"] = lastValAcc;
  s["best_val_loss"] = bestValLoss;
  s["peak_mem"] = peakBytes;
  s["device"] = device.str();
  s["world_size"] = o.world_size;
  if (scaler.enabled()) s["amp_skipped"] = scaler.skippedSteps();
  if (stopper.enabled() && stopper.bestEpoch() >= 0) {
    s["best_epoch"] = stopper.bestEpoch();
    s["best_value"] = stopper.bestValue();
  }
  if (!message.empty()) s["message"] = message;
  if (!checkpointError.empty()) s["error"] = checkpointError;
  return out;
}

}  // namespace wb::train
