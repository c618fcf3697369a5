#include "wb/train/backend_check.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Version.h>
#include <torch/version.h>

#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "wb/parallel/communicator.h"

namespace wb::train {
namespace {
using nlohmann::json;
namespace F = torch::nn::functional;

// Largest |computed - reference| relative to the reference's largest magnitude. Float against
// double over LeNet's fan-ins stays near 1e-6; a wrong kernel is off by O(1) or non-finite.
constexpr double kTolerance = 1e-3;

struct Case {
  torch::Tensor input, weight, bias, grad_out;
  bool input_grad = false;
};

// LeNet's two convolutions on a batch of 64 (what the default run computes first).
std::vector<Case> makeCases() {
  at::Generator gen = at::detail::createCPUGenerator(12345);  // its own: the run's seed stays untouched
  auto randn = [&](at::IntArrayRef sizes) { return torch::randn(sizes, gen, torch::kDouble); };
  std::vector<Case> cases;
  auto add = [&](int64_t n, int64_t cin, int64_t side, int64_t cout, bool input_grad) {
    Case c;
    c.input = randn({n, cin, side, side});
    c.weight = randn({cout, cin, 5, 5}) * (1.0 / std::sqrt(cin * 25.0));
    c.bias = randn({cout});
    c.grad_out = randn({n, cout, side - 4, side - 4});
    c.input_grad = input_grad;
    cases.push_back(c);
  };
  add(64, 1, 28, 10, false);
  add(64, 10, 12, 20, true);
  return cases;
}

// Output, grad input (when asked), grad weight, grad bias of one conv in `dtype`.
std::vector<torch::Tensor> convForwardBackward(const Case& c, at::ScalarType dtype) {
  torch::AutoGradMode grad(true);
  auto x = c.input.to(dtype).detach().requires_grad_(c.input_grad);
  auto w = c.weight.to(dtype).detach().requires_grad_(true);
  auto b = c.bias.to(dtype).detach().requires_grad_(true);
  auto y = F::conv2d(x, w, F::Conv2dFuncOptions().bias(b));
  y.backward(c.grad_out.to(dtype));
  std::vector<torch::Tensor> out{y.detach()};
  if (c.input_grad) out.push_back(x.grad());
  out.push_back(w.grad());
  out.push_back(b.grad());
  return out;
}

const char* partName(size_t i, bool input_grad) {
  static const char* withInput[] = {"output", "grad input", "grad weight", "grad bias"};
  static const char* withoutInput[] = {"output", "grad weight", "grad bias"};
  return input_grad ? withInput[i] : withoutInput[i];
}

// Empty when every part matches its reference; else what went wrong, in words.
std::string compare(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& ref, size_t caseIndex,
                    bool input_grad) {
  for (size_t i = 0; i < ref.size(); ++i) {
    const std::string where = "conv " + std::to_string(caseIndex + 1) + " " + partName(i, input_grad);
    if (i >= got.size() || !got[i].defined() || got[i].sizes() != ref[i].sizes()) return where + ": missing or misshapen";
    const auto g = got[i].to(torch::kDouble);
    const int64_t bad = g.isfinite().logical_not().sum().item<int64_t>();
    if (bad > 0) return where + ": " + std::to_string(bad) + " non-finite value(s)";
    const double scale = std::max(ref[i].abs().max().item<double>(), 1e-12);
    const double err = (g - ref[i]).abs().max().item<double>() / scale;
    if (!(err <= kTolerance)) {
      std::ostringstream os;
      os << where << ": off by " << err << " of its largest value (tolerance " << kTolerance << ")";
      return os.str();
    }
  }
  return {};
}

// One check: `trials` float forward+backward passes against the double reference.
std::string runCheck(const BackendCheckHooks& hooks) {
  const auto cases = makeCases();
  std::vector<std::vector<torch::Tensor>> refs;
  for (const auto& c : cases) refs.push_back(convForwardBackward(c, torch::kDouble));
  const bool mkldnn = at::globalContext().userEnabledMkldnn() && at::hasMKLDNN();
  for (int t = 0; t < std::max(1, hooks.trials); ++t) {
    for (size_t k = 0; k < cases.size(); ++k) {
      auto got = convForwardBackward(cases[k], torch::kFloat);
      if (hooks.tamper) hooks.tamper(got, mkldnn);
      if (auto why = compare(got, refs[k], k, cases[k].input_grad); !why.empty())
        return why + " (pass " + std::to_string(t + 1) + ")";
    }
  }
  return {};
}

std::string match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? m[1].str() : std::string();
}

// True when any rank saw `bad` (every rank calls it).
Result<bool> anyRank(parallel::Communicator* comm, bool bad) {
  if (!comm || !comm->hasGroup() || comm->worldSize() <= 1) return bad;
  auto r = comm->allReduce({bad ? 1.0 : 0.0}, parallel::ReduceOp::Max);
  if (!r.ok())
    return makeError(Errc::Distributed, "rank " + std::to_string(comm->rank()) +
                                            ": the ranks could not agree on the backend check: " + r.error().message);
  return (*r)[0] > 0.5;
}

std::string versionLine(const json& v) {
  return "LibTorch " + v.value("libtorch", std::string("?")) + ", oneDNN " + v.value("onednn", std::string("none")) +
         ", CPU kernels " + v.value("cpu_capability", std::string("?"));
}

}  // namespace

json BackendCheck::toJson() const {
  return {{"ok", ok}, {"mkldnn_disabled", mkldnn_disabled}, {"detail", detail}, {"versions", versions}};
}

json backendVersions() {
  const std::string config = at::show_config();
  json v;
  v["libtorch"] = TORCH_VERSION;
  const std::string onednn = at::hasMKLDNN() ? match(config, R"((?:oneDNN|MKL-DNN) v([0-9][0-9.]*))") : std::string();
  v["onednn"] = onednn.empty() ? json(nullptr) : json(onednn);
  v["cpu_capability"] = match(config, R"(CPU capability usage: ([A-Za-z0-9_]+))");
  return v;
}

namespace {
// WB_TEST_BACKEND_FAULT=nan-with-onednn | nan-always: the tamper hook for whole-process tests (a run
// through the CLI and the window), as a broken build would answer. Unset: none.
BackendCheckHooks faultFromEnvironment(const BackendCheckHooks& given) {
  const char* f = std::getenv("WB_TEST_BACKEND_FAULT");
  if (given.tamper || !f || !*f) return given;
  BackendCheckHooks h = given;
  const bool always = std::string(f) == "nan-always";
  h.tamper = [always](std::vector<torch::Tensor>& got, bool mkldnn) {
    if (always || mkldnn) got.at(1).view(-1)[0] = std::nan("");
  };
  return h;
}
}  // namespace

Result<BackendCheck> checkBackend(parallel::Communicator* comm, const BackendCheckHooks& given) {
  const BackendCheckHooks hooks = faultFromEnvironment(given);
  BackendCheck r;
  r.versions = backendVersions();
  const std::string what = "conv forward+backward (LeNet's shapes, batch 64, " +
                           std::to_string(at::get_num_threads()) + " thread(s)) against a double-precision reference";
  std::string why = runCheck(hooks);
  auto any = anyRank(comm, !why.empty());
  if (!any.ok()) return any.error();
  if (!*any) {
    r.ok = true;
    r.detail = what + ": matches";
    return r;
  }
  const bool mkldnnOn = at::globalContext().userEnabledMkldnn() && at::hasMKLDNN();
  if (why.empty()) why = "another rank's check failed";
  if (mkldnnOn) {
    at::globalContext().setUserEnabledMkldnn(false);
    const std::string without = runCheck(hooks);
    auto anyWithout = anyRank(comm, !without.empty());
    if (!anyWithout.ok()) return anyWithout.error();
    if (!*anyWithout) {
      r.ok = true;
      r.mkldnn_disabled = true;
      r.detail = "this LibTorch computes wrong values with oneDNN on (" + versionLine(r.versions) + "): " + what +
                 ": " + why + "; oneDNN is switched off for this run (slower convolutions, right values)";
      return r;
    }
    why = without.empty() ? "another rank's check failed" : without;
  }
  return makeError(Errc::Internal, "this LibTorch build computes wrong values (" + versionLine(r.versions) + "): " +
                                       what + ": " + why + (mkldnnOn ? ", with oneDNN on and off" : "") +
                                       "; its figures cannot be trusted: use another LibTorch build");
}

}  // namespace wb::train
