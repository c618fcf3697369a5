// FLOPs per operation from the shapes a forward's ATen calls see (the table: wb/model/flop_counter.h).
// A thread-local RecordFunction callback sees every operation with its inputs (at its start) and
// outputs (at its end); only the outermost call counts, so aten::linear is not counted again as
// the aten::addmm it calls.
#include "wb/model/flop_counter.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace wb::model {
namespace {

using Inputs = std::vector<c10::IValue>;

double numel(const c10::IValue& v) { return v.isTensor() ? static_cast<double>(v.toTensor().numel()) : 0.0; }

const c10::IValue* firstTensor(const std::vector<c10::IValue>& values) {
  for (const auto& v : values) {
    if (v.isTensor()) return &v;
    if (v.isTuple())
      for (const auto& e : v.toTupleRef().elements())
        if (e.isTensor()) return &e;
  }
  return nullptr;
}

double outNumel(const std::vector<c10::IValue>& outputs) {
  const c10::IValue* t = firstTensor(outputs);
  return t ? numel(*t) : 0.0;
}

c10::IntArrayRef sizesAt(const Inputs& in, size_t i) {
  return i < in.size() && in[i].isTensor() ? in[i].toTensor().sizes() : c10::IntArrayRef();
}

double product(c10::IntArrayRef v, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= static_cast<double>(v[i]);
  return p;
}

// convolution(input, weight, bias, stride, padding, dilation, [transposed, output_padding,] groups)
double convFlops(const std::string& op, const Inputs& in, const std::vector<c10::IValue>& out) {
  const auto w = sizesAt(in, 1);
  if (w.size() < 3) return 0;
  bool transposed = op.find("transpose") != std::string::npos;
  if ((op == "aten::convolution" || op == "aten::_convolution") && in.size() > 6 && in[6].isBool())
    transposed = in[6].toBool();
  // Each output element of a convolution takes weight[1] x kernel multiply-adds (weight[1] is
  // in/groups); a transposed one spreads each input element over weight[1] x kernel outputs.
  const double perElement = product(w, 1);
  return 2.0 * perElement * (transposed ? numel(in[0]) : outNumel(out));
}

// Matrix products: 2 x M x N x K.
std::optional<double> matmulFlops(const std::string& op, const Inputs& in, const std::vector<c10::IValue>& out) {
  if (op == "aten::linear") {
    const auto w = sizesAt(in, 1);
    return w.size() == 2 ? 2.0 * numel(in[0]) * static_cast<double>(w[0]) : 0.0;
  }
  if (op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addmv") {
    const auto a = sizesAt(in, 1);
    return a.empty() ? 0.0 : 2.0 * outNumel(out) * static_cast<double>(a.back());
  }
  if (op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul" || op == "aten::mv" || op == "aten::dot") {
    const auto a = sizesAt(in, 0);
    return a.empty() ? 0.0 : 2.0 * std::max(1.0, outNumel(out)) * static_cast<double>(a.back());
  }
  return std::nullopt;
}

bool isConv(const std::string& op) {
  return op.rfind("aten::conv", 0) == 0 || op == "aten::_convolution" || op == "aten::cudnn_convolution" ||
         op == "aten::mkldnn_convolution";
}

// Pooling: one per window element per output (max, avg); adaptive ones: one per input element.
std::optional<double> poolFlops(const std::string& op, const Inputs& in, const std::vector<c10::IValue>& out) {
  if (op.find("pool") == std::string::npos) return std::nullopt;
  if (op.find("adaptive") != std::string::npos) return numel(in[0]);
  if (in.size() < 2 || !in[1].isIntList()) return outNumel(out);
  // kernel_size [2] on a 2-d pool is 2 x 2: one value stands for every spatial dimension.
  const auto kernel = in[1].toIntVector();
  const int64_t dims = op.find("3d") != std::string::npos ? 3 : op.find("2d") != std::string::npos ? 2 : 1;
  double window = 1;
  for (int64_t d = 0; d < (kernel.size() == 1 ? dims : static_cast<int64_t>(kernel.size())); ++d)
    window *= static_cast<double>(kernel.size() == 1 ? kernel[0] : kernel[static_cast<size_t>(d)]);
  return outNumel(out) * window;
}

const std::unordered_set<std::string>& normOps() {
  static const std::unordered_set<std::string> s = {
      "aten::batch_norm", "aten::native_batch_norm", "aten::_batch_norm_impl_index", "aten::layer_norm",
      "aten::native_layer_norm", "aten::group_norm", "aten::native_group_norm", "aten::instance_norm"};
  return s;
}

const std::unordered_set<std::string>& elementwiseOps() {
  static const std::unordered_set<std::string> s = {
      "relu", "relu_", "relu6", "add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "sigmoid",
      "sigmoid_", "tanh", "tanh_", "gelu", "silu", "silu_", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_",
      "elu", "elu_", "selu", "threshold", "threshold_", "clamp", "clamp_", "clamp_min", "clamp_max", "neg", "exp",
      "log", "sqrt", "rsqrt", "pow", "abs", "hardswish", "hardswish_", "hardsigmoid", "mish", "softplus",
      "maximum", "minimum", "where", "masked_fill", "masked_fill_", "sum", "mean", "addcmul", "addcdiv", "square",
      "reciprocal", "erf", "sin", "cos"};
  return s;
}

const std::unordered_set<std::string>& freeOps() {
  static const std::unordered_set<std::string> s = {
      "view", "reshape", "flatten", "t", "transpose", "transpose_", "permute", "contiguous", "to", "_to_copy",
      "detach", "detach_", "clone", "copy_", "cat", "stack", "slice", "select", "unsqueeze", "unsqueeze_",
      "squeeze", "squeeze_", "expand", "expand_as", "size", "empty", "empty_like", "empty_strided", "zeros",
      "zeros_like", "ones", "ones_like", "full", "full_like", "as_strided", "chunk", "split", "narrow", "numel",
      "dim", "resize_", "set_", "_reshape_alias", "item", "_local_scalar_dense", "lift", "lift_fresh", "alias",
      "unbind", "index_select", "embedding", "view_as", "reshape_as", "type_as", "fill_", "zero_", "arange",
      "_unsafe_view", "unflatten", "movedim", "repeat", "pad", "constant_pad_nd", "flip", "roll", "argmax",
      "max", "min", "topk", "sort", "gather", "scatter", "index", "_shape_as_tensor", "is_floating_point",
      "result_type", "scalar_tensor", "tensor"};
  return s;
}

// FLOPs of one outermost operation; nullopt: not in the table. `matmul` is set for convolutions
// and matrix products.
std::optional<double> opFlops(const std::string& op, const Inputs& in, const std::vector<c10::IValue>& out,
                              bool& matmul) {
  matmul = false;
  if (isConv(op)) {
    matmul = true;
    return convFlops(op, in, out);
  }
  if (auto m = matmulFlops(op, in, out)) {
    matmul = true;
    return m;
  }
  if (auto p = poolFlops(op, in, out)) return *p;
  if (normOps().count(op)) return 4.0 * (in.empty() ? 0.0 : numel(in[0]));
  const std::string bare = op.rfind("aten::", 0) == 0 ? op.substr(6) : op;
  if (bare == "softmax" || bare == "log_softmax" || bare == "_softmax" || bare == "_log_softmax")
    return 3.0 * outNumel(out);
  if (bare == "dropout" || bare == "feature_dropout" || bare == "alpha_dropout" || bare == "dropout_" ||
      bare == "feature_dropout_") {
    const bool training = in.size() > 2 && in[2].isBool() && in[2].toBool();
    return training ? outNumel(out) : 0.0;
  }
  if (elementwiseOps().count(bare)) return std::max(outNumel(out), in.empty() ? 0.0 : numel(in[0]));
  if (freeOps().count(bare)) return 0.0;
  return std::nullopt;
}

std::string shapeOf(const Inputs& in) {
  for (const auto& v : in)
    if (v.isTensor()) {
      std::ostringstream s;
      s << v.toTensor().sizes();
      return s.str();
    }
  return "";
}

// What the callbacks write to; one per counting thread.
struct Counter {
  FlopCount result;
  int depth = 0;
};
thread_local Counter* tCounter = nullptr;

struct OpContext : at::ObserverContext {
  Inputs inputs;
};

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
  Counter* c = tCounter;
  if (!c) return nullptr;
  if (c->depth++ > 0) return nullptr;
  auto ctx = std::make_unique<OpContext>();
  try {  // some calls are recorded without their inputs (LibTorch asserts on inputs() then)
    for (const auto& v : fn.inputs()) ctx->inputs.push_back(v);
  } catch (const c10::Error&) {
    ctx->inputs.clear();
  }
  return ctx;
}

void onEnd(const at::RecordFunction& fn, at::ObserverContext* raw) {
  Counter* c = tCounter;
  if (!c) return;
  --c->depth;
  auto* ctx = static_cast<OpContext*>(raw);
  if (!ctx) return;
  const std::string op = fn.name();
  if (op.rfind("prim::", 0) == 0) return;  // the interpreter's own bookkeeping: no arithmetic
  bool matmul = false;
  const auto flops = opFlops(op, ctx->inputs, fn.outputs(), matmul);
  if (!flops) {
    ++c->result.uncounted[op];
    return;
  }
  if (*flops <= 0) return;
  c->result.forward += *flops;
  if (matmul) c->result.matmul += *flops;
  c->result.ops.push_back({op, shapeOf(ctx->inputs), *flops, matmul});
}

}  // namespace

std::string FlopCount::uncountedNote() const {
  if (uncounted.empty()) return "";
  std::string s = "not counted: ";
  bool first = true;
  for (const auto& [op, calls] : uncounted) {
    s += (first ? "" : ", ") + op + " (" + std::to_string(calls) + (calls == 1 ? " call)" : " calls)");
    first = false;
  }
  return s;
}

Result<FlopCount> countFlopsOf(const std::function<void()>& forward, int64_t batch) {
  Counter counter;
  counter.result.batch = batch;
  tCounter = &counter;
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(onStart, onEnd)
                                                     .needsInputs(true)
                                                     .needsOutputs(true)
                                                     .scopes({at::RecordScope::FUNCTION}));
  std::optional<std::string> failed;
  try {
    forward();
  } catch (const std::exception& e) {
    failed = e.what();
  }
  at::removeCallback(handle);
  tCounter = nullptr;
  if (failed) return makeError(Errc::Model, "counting FLOPs: the forward failed: " + *failed);
  return counter.result;
}

Result<FlopCount> countForwardFlops(Model& model, const torch::Tensor& input) {
  model.train(false);
  auto count = countFlopsOf(
      [&] {
        torch::NoGradGuard noGrad;
        model.forward(input);
      },
      input.dim() > 0 ? input.size(0) : 1);
  model.train(true);
  return count;
}

}  // namespace wb::model
