#include "wb/records/peak_store.h"

#include <algorithm>

#include "wb/common/sysinfo.h"
#include "wb/proto/capability_keys.h"
#include "wb/proto/events.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"

namespace wb::records {
using nlohmann::json;

const PeakKernel* PeakDevice::find(const std::string& kernel, const std::string& precision) const {
  const PeakKernel* best = nullptr;
  for (const auto& k : kernels)
    if (k.kernel == kernel && k.precision == precision && (!best || k.gflop_per_s > best->gflop_per_s)) best = &k;
  return best;
}

const PeakKernel* PeakDevice::best(const std::string& precision) const {
  const PeakKernel* top = nullptr;
  for (const auto& k : kernels)
    if (k.precision == precision && (!top || k.gflop_per_s > top->gflop_per_s)) top = &k;
  return top;
}

const PeakDevice* PeakResult::device(const std::string& name) const {
  for (const auto& d : devices)
    if (d.device == name) return &d;
  return nullptr;
}

bool PeakResult::contended() const { return isContended(other_cores); }

std::string peakKey(const MachineId& machine, const std::vector<std::string>& gpus) {
  json identity = machineIdentity(machine);
  identity["gpus"] = gpus;
  return storeKey(identity);
}

std::filesystem::path peakPath(const std::string& key, const std::filesystem::path& dir) {
  return dir / ("peak-" + key + ".json");
}

// ---- the record as JSON -----------------------------------------------------------------

WB_FIELDS(PeakKernel) {
  f("kernel", e.kernel), f("precision", e.precision), f("shape", e.shape), f("flops_per_call", e.flops_per_call);
  f("calls", e.calls), f("seconds", e.seconds), f("gflop_per_s", e.gflop_per_s), f("spread", e.spread);
}

WB_FIELDS(PeakSkipped) { f("precision", e.precision), f("why", e.why); }

WB_FIELDS(PeakDevice) {
  f("device", e.device), f("name", e.name), f("threads", e.threads), f("kernels", e.kernels), f("skipped", e.skipped);
}

WB_FIELDS(PeakResult) {
  f("v", proto::derived(1)), f("kind", proto::derived(std::string("probe-peak"))), f("key", e.key);
  f("measured_at", e.measured_at);
  f("host", proto::group([&](auto&& g) { g("name", e.host), g("cpu", e.cpu), g("cores", e.cores); }));
  f("gpus", e.gpus), f("libtorch", e.libtorch), f("total_s", e.total_s), f("other_cores", e.other_cores);
  f("contended", proto::derived(e.contended())), f("convention", proto::derived(std::string(proto::kFlopsConventionShort)));
  f("devices", e.devices);
}

json peakJson(const PeakResult& r) {
  json doc = json::object();
  proto::fieldsToJson(r, doc);
  return doc;
}

Result<PeakResult> peakFromJson(const json& doc) {
  if (!doc.is_object() || proto::stringOr(doc, "kind", "") != "probe-peak" || !doc.contains("devices") ||
      !doc["devices"].is_array())
    return makeError(Errc::InvalidConfig, "not a peak calibration (kind \"probe-peak\" with devices)");
  return proto::readAs<PeakResult>(doc);
}

Status savePeak(const PeakResult& result, const std::filesystem::path& dir) {
  return writeStored(dir, peakPath(result.key, dir).filename().string(), peakJson(result));
}

std::optional<PeakResult> loadPeak(const MachineId& machine, const std::vector<std::string>& gpus,
                                   const std::filesystem::path& dir) {
  const std::string key = peakKey(machine, gpus);
  const auto doc = readCache(peakPath(key, dir));
  if (!doc) return std::nullopt;
  auto r = peakFromJson(*doc);
  if (!r.ok() || r->key != key) return std::nullopt;
  return std::move(r.value());
}

// ---- datasheet peaks --------------------------------------------------------------------

// Dense figures: where a datasheet gives tensor-core peaks "with sparsity" (marked *), the dense
// peak is half of it. GeForce cards: the FP32-accumulate rates (what PyTorch's kernels use).
const std::vector<DatasheetEntry>& datasheetTable() {
  static const std::vector<DatasheetEntry> t = {
      {"H200 NVL", "NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5,
       "NVIDIA H200 Tensor Core GPU datasheet (TF32 835*, BF16/FP16 1,671* with sparsity, halved)"},
      {"H200", "NVIDIA H200 SXM", 67, 494.5, 989.5, 989.5,
       "NVIDIA H200 Tensor Core GPU datasheet (TF32 989*, BF16/FP16 1,979* with sparsity, halved)"},
      {"H100 NVL", "NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5,
       "NVIDIA H100 Tensor Core GPU datasheet (TF32 835*, BF16/FP16 1,671* with sparsity, halved)"},
      {"H100 PCIe", "NVIDIA H100 PCIe", 51, 378, 756.5, 756.5,
       "NVIDIA H100 Tensor Core GPU datasheet (TF32 756*, BF16/FP16 1,513* with sparsity, halved)"},
      {"H100", "NVIDIA H100 SXM5", 67, 494.5, 989.5, 989.5,
       "NVIDIA H100 Tensor Core GPU datasheet (TF32 989*, BF16/FP16 1,979* with sparsity, halved)"},
      {"A100", "NVIDIA A100", 19.5, 156, 312, 312,
       "NVIDIA A100 Tensor Core GPU datasheet (TF32 156, BF16/FP16 312 dense; 312*/624* with sparsity)"},
      {"L40S", "NVIDIA L40S", 91.6, 183, 362.05, 362.05,
       "NVIDIA L40S datasheet (TF32 183 | 366*, BF16/FP16 362.05 | 733*)"},
      {"L40", "NVIDIA L40", 90.5, 90.5, 181.05, 181.05,
       "NVIDIA L40 datasheet (TF32 90.5 | 181*, BF16/FP16 181.05 | 362.1*)"},
      {"L4", "NVIDIA L4", 30.3, 60, 121, 121,
       "NVIDIA L4 Tensor Core GPU datasheet (TF32 120*, BF16/FP16 242* with sparsity, halved)"},
      {"RTX 5090", "NVIDIA GeForce RTX 5090", 104.8, 104.8, 209.5, 209.5,
       "NVIDIA RTX Blackwell GPU architecture whitepaper, appendix (FP16/BF16 tensor with FP32 accumulate, dense)"},
      {"RTX 4090", "NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2,
       "NVIDIA Ada GPU architecture whitepaper, appendix (FP16/BF16 tensor with FP32 accumulate, dense)"},
      {"RTX 4080", "NVIDIA GeForce RTX 4080", 48.7, 48.7, 97.5, 97.5,
       "NVIDIA Ada GPU architecture whitepaper, appendix (FP16/BF16 tensor with FP32 accumulate, dense)"},
      {"RTX 3090", "NVIDIA GeForce RTX 3090", 35.6, 35.6, 71, 71,
       "NVIDIA Ampere GA102 GPU architecture whitepaper, appendix (FP16/BF16 tensor with FP32 accumulate, dense)"},
  };
  return t;
}

namespace {

// `match` as whole words of `name` ("A100" in "NVIDIA A100-SXM4-80GB", not in "GA100"), not followed by a variant's word (an RTX 4090 D or a 4080
// SUPER has other peaks: not in the table rather than a neighbour's figure).
bool matchesName(const std::string& name, const std::string& match) {
  static const std::vector<std::string> variants = {"Ti", "SUPER", "D", "Laptop", "Mobile", "Max-Q"};
  for (size_t pos = name.find(match); pos != std::string::npos; pos = name.find(match, pos + 1)) {
    const bool startsWord = pos == 0 || name[pos - 1] == ' ';
    const size_t end = pos + match.size();
    if (!startsWord || (end < name.size() && name[end] != ' ' && name[end] != '-')) continue;
    std::string next = name.substr(std::min(name.size(), end + 1));
    next = next.substr(0, next.find_first_of(" -"));
    if (std::find(variants.begin(), variants.end(), next) == variants.end()) return true;
  }
  return false;
}

}  // namespace

const DatasheetEntry* datasheetFor(const std::string& gpuName) {
  const DatasheetEntry* best = nullptr;
  for (const auto& e : datasheetTable())
    if (matchesName(gpuName, e.match) && (!best || e.match.size() > best->match.size())) best = &e;
  return best;
}

double datasheetTflops(const DatasheetEntry& e, const std::string& precision) {
  if (precision == "fp32") return e.fp32;
  if (precision == "tf32") return e.tf32;
  if (precision == "bf16") return e.bf16;
  if (precision == "fp16") return e.fp16;
  return 0;
}

// ---- which peak a run is measured against ------------------------------------------------

std::string peakPrecision(const std::string& runPrecision, bool cuda) {
  if (runPrecision == "bf16-mixed") return "bf16";
  if (runPrecision == "16-mixed") return "fp16";
  return cuda ? "tf32" : "fp32";
}

namespace {

std::string dateOf(const std::string& iso) { return iso.size() >= 10 ? iso.substr(0, 10) : iso; }

}  // namespace

void setPeaks(proto::FlopsFigures& f, const PeakResult* peak, const std::string& device, const std::string& gpuName,
              const std::string& runPrecision, int devices) {
  const bool cuda = device.rfind("cuda", 0) == 0;
  const std::string precision = peakPrecision(runPrecision, cuda);
  const int n = cuda ? std::max(1, devices) : 1;  // CPU processes share the one CPU's peak
  const std::string times = n > 1 ? " x " + std::to_string(n) + " GPUs" : "";
  const PeakDevice* d = peak ? peak->device(cuda ? "cuda:0" : "cpu") : nullptr;
  const PeakKernel* k = d ? d->best(precision) : nullptr;
  if (k) {
    f.peak = proto::PeakFigure{k->gflop_per_s * n, precision + " " + k->kernel + " measured on this " +
                                                       std::string(cuda ? "GPU" : "CPU") + " (" +
                                                       (cuda ? "" : std::to_string(d->threads) + " threads; ") + k->shape +
                                                       ")" + times + ", " + dateOf(peak->measured_at)};
  } else {
    f.no_peak = !peak ? "no peak measured on this machine: run `workbench-cli probe peak`"
                : !d  ? "the stored peak has no " + std::string(cuda ? "GPU" : "CPU") +
                           " figures: run `workbench-cli probe peak` again"
                      : precision + " was not measured on this machine (see `workbench-cli capabilities`)";
  }
  if (!cuda) return;
  const DatasheetEntry* e = datasheetFor(gpuName);
  const double tflops = e ? datasheetTflops(*e, precision) : 0;
  if (tflops > 0)
    f.datasheet = proto::PeakFigure{tflops * 1000.0 * n, e->gpu + " " + precision + " dense" + times + ", " + e->source};
  else
    f.no_datasheet = (gpuName.empty() ? std::string("this GPU") : gpuName) +
                     (e ? " has no " + precision + " figure in the datasheet table" : " is not in the datasheet table") +
                     ": no datasheet percentage";
}

void attachPeak(json& caps, const std::optional<PeakResult>& r) {
  if (!caps.is_object()) caps = json::object();
  if (!r) {
    caps[proto::caps::kPeak] = {{"measured", false}, {"how", "workbench-cli probe peak"}};
    return;
  }
  json p = peakJson(*r);
  p["measured"] = true;
  p["date"] = dateOf(r->measured_at);
  caps[proto::caps::kPeak] = p;
}

render::Table peakTable(const PeakResult& r) {
  render::Table t;
  t.title = "Attainable peak of this machine (measured " + dateOf(r.measured_at) + ")";
  t.columns = {{"device", "Device", ""},       {"kernel", "Kernel", ""},  {"precision", "Precision", ""},
               {"shape", "Shape", ""},         {"gflop_per_s", "GFLOP/s", "GFLOP/s"},
               {"spread", "Spread", "%"},      {"calls", "Calls", ""}};
  for (const auto& d : r.devices) {
    for (const auto& k : d.kernels)
      t.rows.push_back({render::Cell::str(d.device + (d.device == "cpu" ? " (" + std::to_string(d.threads) + " threads)" : "")),
                        render::Cell::str(k.kernel), render::Cell::str(k.precision), render::Cell::str(k.shape),
                        render::Cell::num(fmtFixed(k.gflop_per_s, k.gflop_per_s < 100 ? 1 : 0), k.gflop_per_s),
                        render::Cell::num(fmtFixed(k.spread * 100, 1) + " %", k.spread * 100),
                        render::Cell::num(std::to_string(k.calls), static_cast<double>(k.calls))});
    for (const auto& s : d.skipped) t.notes.push_back(d.device + " " + s.precision + " not measured: " + s.why);
    if (d.device.rfind("cuda", 0) == 0) {
      const DatasheetEntry* e = datasheetFor(d.name);
      t.notes.push_back(e ? d.name + " datasheet (dense): fp32 " + fmtFixed(e->fp32, 1) + ", tf32 " + fmtFixed(e->tf32, 1) +
                                ", bf16 " + fmtFixed(e->bf16, 1) + ", fp16 " + fmtFixed(e->fp16, 1) + " TFLOP/s (" +
                                e->source + ")"
                          : d.name + " is not in the datasheet table: no datasheet peak");
    }
  }
  if (r.contended())
    t.notes.push_back("Measured under contention: other processes used up to " + fmtFixed(r.other_cores, 1) +
                      " cores; measure again on a quiet machine.");
  t.notes.push_back(std::string("GFLOP/s: ") + proto::kFlopsConventionShort + ". Each kernel is repeated until two "
                    "consecutive timed windows agree (spread), about a second each.");
  return t;
}

}  // namespace wb::records
