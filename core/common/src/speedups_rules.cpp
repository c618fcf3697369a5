#include "speedups_rules.h"

#include <algorithm>

#include "wb/common/choices.h"

namespace wb::rules {

namespace {
namespace k = speedup;

std::string num(int n) { return std::to_string(n); }
std::string pyBool(bool b) { return b ? "True" : "False"; }
std::string plusMinus(bool on, const std::string& what) { return (on ? "+ " : "− ") + what; }

// The levers' "cannot help here" rules.
bool convNet(const Config& c) { return c.model.name != "mlp"; }  // a TorchScript model may have convolutions
std::string noConvolutions(const Config& c, const Here&) {
  return convNet(c) ? "" : c.model.name + " has no convolutions: the layout of its weights does not matter";
}

std::string cacheCannotHelp(const Config& c, const Here&) {
  if (c.data.dataset.rfind("folder:", 0) != 0)
    return "the images of " + c.data.dataset + " are held decoded in memory already: only image folders decode";
  if (c.train.epochs < 2) return "a run of one epoch decodes every image once anyway";
  return "";
}

std::string fusedCannotHelp(const Config& c, const Here&) {
  return c.optim.name == "adadelta" ? "adadelta has no multi-tensor step here (sgd, adam and adamw have)" : "";
}

std::string accumulationCannotHelp(const Config& c, const Here&) {
  return c.speedups.devices > 1 ? ""
                                : "on one device accumulation saves no communication: it only makes the effective "
                                  "batch larger, which changes the training rather than speeding it up";
}

std::string precisionInTorch(const std::string& p) {
  if (p == choice::kBf16Mixed) return "autocast to bfloat16 (torch.autocast(device_type, dtype=torch.bfloat16))";
  if (p == choice::kFp16Mixed) return "autocast to float16 with a GradScaler";
  return "float32";
}

// Early stopping that cannot stop a run of `c`'s epochs (it evaluates once per epoch).
std::string cannotTrigger(const Config& c) {
  const int epochs = c.train.epochs, patience = c.speedups.early_stopping.patience;
  if (patience <= 0 || epochs > patience) return std::string();
  return "cannot trigger in " + num(epochs) + " epoch(s) with patience " + num(patience);
}

LightningSetting comment(std::string words) { return {{}, {}, std::move(words)}; }

Speedup decodedCache() {
  Speedup s{k::kDecodedCache, "Decoded-sample cache", "speedups.decoded_cache", Availability::Always, "",
            "Decode each image once and keep its pixels (in memory, or a memory-mapped file for data larger than "
            "memory); augmentation stays per sample and epoch.", "",
            {Math::Keeps, MathCheck::Steps, "the same pixels, decoded once; augmentation stays per sample and epoch"},
            Timing::Trials,
            [](Config& c) { c.speedups.decoded_cache = "off"; },
            [](Config& t, const Config& f) { t.speedups.decoded_cache = f.speedups.decoded_cache; },
            [](const Config& c) { return "decoded cache " + c.speedups.decoded_cache; }};
  s.on = [](Config& c, const Here&) { c.speedups.decoded_cache = "memory"; };
  s.in_evaluation = true;  // the validation split is decoded once too
  s.cannotHelp = cacheCannotHelp;
  s.pytorch = [](const Config& c) -> std::string {
    return c.speedups.decoded_cache == "off" ? std::string()
                                             : "a Dataset that decodes each image once and keeps its tensor (" +
                                                   c.speedups.decoded_cache + "); augmentation after it";
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    return comment(c.speedups.decoded_cache == "off" ? "" : "decoded cache: decode each image once in your Dataset and keep its tensor");
  };
  return s;
}

Speedup channelsLast() {
  Speedup s{k::kChannelsLast, "Channels-last", "speedups.channels_last", Availability::Always, "",
            "Lays convolution weights and inputs out as NHWC, the layout oneDNN and cuDNN's tensor cores prefer "
            "(it slows some models down; under sharding the inputs only).", "",
            {Math::Keeps, MathCheck::Steps, "another memory layout for the same arithmetic (fp32 sums in another order)"},
            Timing::Segments,
            [](Config& c) { c.speedups.channels_last = false; },
            [](Config& t, const Config& f) { t.speedups.channels_last = f.speedups.channels_last; },
            [](const Config& c) { return "channels-last " + onOff(c.speedups.channels_last); }};
  s.on = [](Config& c, const Here&) { c.speedups.channels_last = true; };
  s.in_evaluation = true;  // the evaluation's forward passes in the same layout
  s.cannotHelp = noConvolutions;
  s.pytorch = [](const Config& c) -> std::string {
    return c.speedups.channels_last ? "model.to(memory_format=torch.channels_last), and each batch's images alike" : "";
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    return comment(c.speedups.channels_last ? "channels-last: self.to(memory_format=torch.channels_last) in setup(), and the "
                                              "batch's images alike in training_step"
                                            : "");
  };
  return s;
}

Speedup fusedOptimizer() {
  Speedup s{k::kFusedOptimizer, "Multi-tensor optimiser step", "speedups.fused_optimizer", Availability::Always, "",
            "Steps every parameter with a few multi-tensor (_foreach) kernels instead of a loop of small ones "
            "(sgd, adam, adamw).", "",
            {Math::Keeps, MathCheck::Steps, "the same update, in a few multi-tensor kernels"}, Timing::Segments,
            [](Config& c) { c.speedups.fused_optimizer = false; },
            [](Config& t, const Config& f) { t.speedups.fused_optimizer = f.speedups.fused_optimizer; },
            [](const Config& c) { return "multi-tensor step " + onOff(c.speedups.fused_optimizer); }};
  s.on = [](Config& c, const Here&) { c.speedups.fused_optimizer = true; };
  s.cannotHelp = fusedCannotHelp;
  s.pytorch = [](const Config& c) -> std::string { return c.speedups.fused_optimizer ? std::string("the optimizer with foreach=True") : ""; };
  s.lightning = [](const Config& c) -> LightningSetting {
    return comment(c.speedups.fused_optimizer ? "multi-tensor step: foreach=True for the optimizer in configure_optimizers" : "");
  };
  return s;
}

Speedup gradAccumulation() {
  Speedup s{k::kGradAccumulation, "Gradient accumulation", "speedups.grad_accumulation", Availability::Always, "",
            "Sums the gradients of N micro-batches before one optimiser step and one all-reduce: an effective "
            "batch of N x batch_size per rank.", "",
            {Math::Changes, MathCheck::Steps, "an effective batch N times larger: fewer, larger optimiser steps"},
            Timing::Trials,
            [](Config& c) { c.speedups.grad_accumulation = 1; },
            [](Config& t, const Config& f) { t.speedups.grad_accumulation = f.speedups.grad_accumulation; },
            [](const Config& c) { return "accumulate " + num(c.speedups.grad_accumulation) + " micro-batches"; }};
  s.on = [](Config& c, const Here&) { c.speedups.grad_accumulation = 4; };
  s.cannotHelp = accumulationCannotHelp;
  s.pytorch = [](const Config& c) -> std::string {
    const int n = c.speedups.grad_accumulation;
    return n > 1 ? "optimizer.step() every " + num(n) + " micro-batches, under model.no_sync() for the first " + num(n - 1)
                 : std::string();
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    const int n = c.speedups.grad_accumulation;
    return n > 1 ? LightningSetting{{"accumulate_grad_batches=" + num(n)}, {}, ""} : LightningSetting{};
  };
  return s;
}

Speedup cudnnBenchmark() {
  Speedup s{k::kCudnnBenchmark, "cuDNN autotune", "speedups.cudnn_benchmark", Availability::NeedsCuda, "CUDA",
            "Times cuDNN's convolution algorithms on the first batch of each shape and keeps the fastest "
            "(slower when shapes vary).",
            "no cuDNN on the CPU: the setting has no effect",
            {Math::Keeps, MathCheck::Steps, "another convolution algorithm for the same arithmetic (fp32 sums in another order)"},
            Timing::Segments,
            [](Config& c) { c.speedups.cudnn_benchmark = false; },
            [](Config& t, const Config& f) { t.speedups.cudnn_benchmark = f.speedups.cudnn_benchmark; },
            [](const Config& c) { return "cuDNN autotune " + onOff(c.speedups.cudnn_benchmark); }};
  s.on = [](Config& c, const Here&) { c.speedups.cudnn_benchmark = true; };
  s.in_evaluation = true;  // the evaluation's convolutions are autotuned too
  s.cannotHelp = noConvolutions;
  s.pytorch = [](const Config& c) -> std::string { return c.speedups.cudnn_benchmark ? std::string("torch.backends.cudnn.benchmark = True") : ""; };
  s.lightning = [](const Config& c) -> LightningSetting {
    return c.speedups.cudnn_benchmark ? LightningSetting{{"benchmark=True"}, {}, ""} : LightningSetting{};
  };
  return s;
}

Speedup tf32() {
  Speedup s{k::kTf32, "TF32 matmuls", "speedups.tf32", Availability::NeedsCuda, "CUDA",
            "Lets fp32 matmuls run on TF32 tensor cores (Ampere and later: 10-bit mantissa inputs, fp32 sums); "
            "cuDNN convolutions may already, as LibTorch's default.",
            "CPU matmuls stay fp32: the setting has no effect",
            {Math::Changes, MathCheck::Steps, "matmul inputs rounded to a 10-bit mantissa"}, Timing::Segments,
            [](Config& c) { c.speedups.tf32 = false; },
            [](Config& t, const Config& f) { t.speedups.tf32 = f.speedups.tf32; },
            [](const Config& c) { return "TF32 " + onOff(c.speedups.tf32); }};
  s.on = [](Config& c, const Here&) { c.speedups.tf32 = true; };
  s.in_evaluation = true;  // the evaluation's matmuls too
  s.pytorch = [](const Config& c) -> std::string { return c.speedups.tf32 ? std::string("torch.backends.cuda.matmul.allow_tf32 = True") : ""; };
  s.lightning = [](const Config& c) -> LightningSetting {
    return comment(c.speedups.tf32 ? "TF32: torch.set_float32_matmul_precision(\"high\") before the Trainer" : "");
  };
  return s;
}

}  // namespace

std::string onOff(bool on) { return on ? "on" : "off"; }

void describeWorkers(Speedup& s) {
  s.in_evaluation = true;  // the evaluation's loader has the same workers
  s.on = [](Config& c, const Here& h) { c.speedups.workers = h.workers; };
  s.cannotHelp = [](const Config&, const Here& h) -> std::string {
    return h.workers_measured && h.workers == 0 ? h.workers_source + " recommends 0 workers for this experiment on this machine"
                                                : std::string();
  };
  s.caveat = [](const Config&, const Here& h) -> std::string {
    return h.workers_measured ? "workers from " + h.workers_source + " (the smallest count the fastest is not clearly faster than)"
                              : "workers from " + h.workers_source + "; run `workbench-cli probe workers` to measure the best count";
  };
  s.step = [](const Config& from, const Config& to, const Here&) -> std::string {
    return to.speedups.workers > 0 ? "loader workers " + num(from.speedups.workers) + " → " + num(to.speedups.workers)
                                   : std::string("loader workers: 0 recommended, as the baseline");
  };
  s.search = Search::Dimension;
  s.uses_cores = true;
  s.control.zero = "0 (in the loop)";
  s.control.probe = true;
  s.pytorch = [](const Config& c) -> std::string { return "DataLoader(num_workers=" + num(c.speedups.workers) + ")"; };
  s.lightning = [](const Config& c) -> LightningSetting { return LightningSetting{{}, {"num_workers=" + num(c.speedups.workers)}, ""}; };
}

void describePinMemory(Speedup& s) {
  s.in_evaluation = true;  // and the evaluation's staging buffers
  s.on = [](Config& c, const Here&) { c.speedups.pin_memory = true; };
  s.step = [](const Config&, const Config&, const Here&) -> std::string { return std::string("pin memory"); };
  s.name = [](const Config& c) -> std::string { return plusMinus(c.speedups.pin_memory, "pin memory"); };
  s.search = Search::Dimension;
  s.pytorch = [](const Config& c) -> std::string { return c.speedups.pin_memory ? std::string("DataLoader(pin_memory=True)") : ""; };
  s.lightning = [](const Config& c) -> LightningSetting { return LightningSetting{{}, {"pin_memory=" + pyBool(c.speedups.pin_memory)}, ""}; };
}

void describeDevices(Speedup& s) {
  s.on = [](Config& c, const Here& h) { c.speedups.devices = h.devices; };
  s.cannotHelp = [](const Config&, const Here& h) -> std::string {
    if (h.devices >= 2) return std::string();
    return std::string(h.cuda ? "only one GPU on this machine" : "this machine allows only one process per run");
  };
  s.caveat = [](const Config& c, const Here& h) -> std::string {
    const int d = std::max(c.speedups.devices, 1);
    return h.cuda || h.cores >= 2 * d ? std::string() : "the processes share " + num(h.cores) + " cores";
  };
  s.step = [](const Config& from, const Config& to, const Here& h) -> std::string {
    return "devices " + num(from.speedups.devices) + " → " + num(std::max(to.speedups.devices, 2)) +
           (h.cuda ? " GPUs" : " CPU processes");
  };
  s.note = [](const Here& h) -> std::string {
    return std::string(h.cuda ? "One process per GPU, gradients all-reduced over NCCL"
                              : "One CPU process per device over Gloo; the cores are shared, so expect little speedup "
                                "from more processes than cores");
  };
  s.search = Search::Dimension;
  s.uses_cores = true;
  s.control.kinds = {{"gpus", "GPUs"}, {"cpu-processes", "CPU processes"}};
  s.pytorch = [](const Config& c) -> std::string {
    const int d = c.speedups.devices;
    return d > 1 ? "DistributedDataParallel over " + num(d) + " processes (torchrun --nproc-per-node " + num(d) + ")" : std::string();
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    LightningSetting l{{"devices=" + num(c.speedups.devices)}, {}, ""};
    if (c.speedups.devices > 1) l.trainer.push_back("strategy=\"ddp\"");
    return l;
  };
}

void describePrecision(Speedup& s) {
  s.in_evaluation = true;  // the evaluation runs under the same autocast
  s.on = [](Config& c, const Here& h) { c.speedups.precision = h.mixed_precision; };
  s.step = [](const Config& from, const Config& to, const Here&) -> std::string {
    return "precision " + from.speedups.precision + " → " + to.speedups.precision;
  };
  s.name = [](const Config& c) -> std::string {
    const std::string& p = c.speedups.precision;
    if (p == choice::kBf16Mixed) return std::string("+ bf16");
    if (p == choice::kFp16Mixed) return std::string("+ fp16");
    if (p == choice::kFp32) return std::string("fp32");
    return "precision " + p;
  };
  s.search = Search::Dimension;
  s.pytorch = [](const Config& c) -> std::string { return "precision: " + precisionInTorch(c.speedups.precision); };
  s.lightning = [](const Config& c) -> LightningSetting { return LightningSetting{{"precision=\"" + c.speedups.precision + "\""}, {}, ""}; };
}

void describeEarlyStopping(Speedup& s) {
  s.on = [](Config& c, const Here&) { c.speedups.early_stopping.patience = kRecipePatience; };
  s.caveat = [](const Config& c, const Here&) { return cannotTrigger(c); };
  s.control.caveat = [](const Config& c) -> std::string {
    const std::string why = cannotTrigger(c);
    return why.empty() ? why
                       : "Early stopping " + why + ": it evaluates once per epoch. Set Epochs above " +
                             num(c.speedups.early_stopping.patience) + " for it to save time.";
  };
  s.step = [](const Config&, const Config& to, const Here&) -> std::string {
    return "early stopping (patience " + num(to.speedups.early_stopping.patience) + ")";
  };
  s.note = [](const Here&) -> std::string { return std::string("Stops when the monitored metric stops improving; restores the best weights"); };
  s.name = [](const Config& c) -> std::string {
    const int p = c.speedups.early_stopping.patience;
    return p > 0 ? "patience " + num(p) : std::string("no early stopping");
  };
  s.search = Search::Never;
  s.why = "it ends a run after the target, so it cannot change the time to reach it";
  s.control.zero = "off";
  s.control.suffix = " evals";
  s.control.more = {{"speedups.early_stopping.monitor", "Monitor"}, {"speedups.early_stopping.min_delta", "Min. improvement"}};
  s.control.more_tip = "Monitor and minimum improvement";
  s.control.follows = {{"speedups.early_stopping.mode", "speedups.early_stopping.monitor", [](const std::string& monitor) {
                          return std::string(monitor == choice::kMonitorValAcc ? choice::kModeMax : choice::kModeMin);
                        }}};
  s.pytorch = [](const Config& c) -> std::string {
    const auto& es = c.speedups.early_stopping;
    return es.patience > 0 ? "early stopping: stop after " + num(es.patience) + " evaluations without improvement in " + es.monitor
                           : std::string();
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    const auto& es = c.speedups.early_stopping;
    if (es.patience <= 0) return LightningSetting{};
    return LightningSetting{{"callbacks=[L.pytorch.callbacks.EarlyStopping(monitor=\"" + es.monitor + "\", patience=" +
                             num(es.patience) + ", mode=\"" + es.mode + "\")]"},
                            {},
                            ""};
  };
}

void describeSharding(Speedup& s) {
  s.on = [](Config& c, const Here& h) {
    c.speedups.sharding = "zero1";
    if (c.speedups.devices <= 1) c.speedups.devices = h.devices;  // alone: it brings the devices it needs
  };
  s.cannotHelp = [](const Config& c, const Here&) -> std::string {
    return c.speedups.devices > 1 ? std::string() : std::string("needs devices > 1 (the devices step did not run)");
  };
  s.step = [](const Config& from, const Config& to, const Here&) -> std::string {
    const bool brings = from.speedups.devices != to.speedups.devices;
    return "sharding " + to.speedups.sharding + (brings ? " with devices " + num(to.speedups.devices) : "");
  };
  s.note = [](const Here& h) -> std::string {
    return std::string(h.cuda ? "ZeRO-1/2 over NCCL (needs devices > 1)"
                              : "ZeRO-1/2 over Gloo (needs devices > 1); Gloo has no reduce-scatter, so ZeRO-2's "
                                "gradient-memory saving does not apply");
  };
  s.name = [](const Config& c) -> std::string {
    return c.speedups.sharding == "off" ? std::string("no sharding") : "+ " + c.speedups.sharding;
  };
  s.search = Search::WithDevices;
  s.control.waits = [](const Config& c) -> std::string {
    return c.speedups.devices > 1 ? std::string() : std::string("Needs devices > 1 (set Devices to 2 or more).");
  };
  s.pytorch = [](const Config& c) -> std::string {
    return c.speedups.sharding == "off"
               ? std::string()
               : "optimizer state sharded (" + c.speedups.sharding + ": torch.distributed.optim.ZeroRedundancyOptimizer)";
  };
  s.lightning = [](const Config& c) -> LightningSetting {
    const std::string& z = c.speedups.sharding;
    return comment(z == "off" ? "" : "sharding " + z + ": strategy=\"deepspeed_stage_" + (z == "zero1" ? "1" : "2") +
                                         "\" (or torch's ZeroRedundancyOptimizer in configure_optimizers)");
  };
}

void describeInferenceEval(Speedup& s) {
  s.on = [](Config& c, const Here&) { c.speedups.inference_eval = true; };
  s.step = [](const Config&, const Config&, const Here&) -> std::string { return std::string("inference-mode eval"); };
  s.note = [](const Here&) -> std::string { return std::string("Evaluate under InferenceMode with the larger eval batch"); };
  s.name = [](const Config& c) -> std::string { return plusMinus(c.speedups.inference_eval, "inference-mode eval"); };
  s.search = Search::Evaluation;
  s.pytorch = [](const Config& c) -> std::string {
    return "evaluation batch " + num(c.train.eval_batch_size) + (c.speedups.inference_eval ? " under torch.inference_mode()" : "");
  };
  s.lightning = [](const Config& c) -> LightningSetting { return LightningSetting{{"inference_mode=" + pyBool(c.speedups.inference_eval)}, {}, ""}; };
}

std::vector<Speedup> levers() {
  return {decodedCache(), channelsLast(), fusedOptimizer(), gradAccumulation(), cudnnBenchmark(), tf32()};
}

}  // namespace wb::rules
