// ZeRO-1/2 (as DeepSpeed partitions): the parameters laid end to end and cut into equal ranges,
// this rank's range stepped as flat pieces and all-gathered after, and the optimiser state cut
// into shards (loadOptimizerState) and joined back into one unsharded state
// (consolidatedOptimizerState), so checkpoints do not depend on the world size or sharding.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "data_parallel_impl.h"

namespace wb::parallel {
namespace {

// ---- one parameter's optimiser state, cut into pieces and joined back ---------------------
// LibTorch's per-parameter states (AdamParamState, SGDParamState, ...) have no generic accessor
// but their serialize(): read and write them through an archive, field by field.
using Fields = std::vector<std::pair<std::string, c10::IValue>>;

Fields fieldsOf(const torch::optim::OptimizerParamState& state) {
  torch::serialize::OutputArchive out;
  state.serialize(out);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  Fields fields;
  for (const auto& key : in.keys()) {
    if (key == "training") continue;  // every archive's module has it; not a state field
    c10::IValue value;
    in.read(key, value);
    fields.emplace_back(key, std::move(value));
  }
  return fields;
}

std::unique_ptr<torch::optim::OptimizerParamState> withFields(const torch::optim::OptimizerParamState& like,
                                                              const Fields& fields) {
  torch::serialize::OutputArchive out;
  for (const auto& [key, value] : fields) out.write(key, value);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  auto state = like.clone();
  state->serialize(in);
  return state;
}

bool isTensorOfShape(const c10::IValue& v, at::IntArrayRef shape) {
  return v.isTensor() && v.toTensor().defined() && v.toTensor().sizes() == shape;
}

// The state of a whole tensor of `shape` from the states of its pieces (element order) of
// `lengths`: element-wise state tensors (one value per element, 1-D in a piece) are
// concatenated; other fields (step counts) are equal in every piece and taken from the first.
std::unique_ptr<torch::optim::OptimizerParamState> joinStates(
    const std::vector<const torch::optim::OptimizerParamState*>& parts, const std::vector<int64_t>& lengths,
    at::IntArrayRef shape) {
  std::vector<Fields> fields;
  for (const auto* part : parts) fields.push_back(fieldsOf(*part));
  Fields joined = fields.front();
  for (auto& [key, value] : joined) {
    if (!isTensorOfShape(value, {lengths.front()})) continue;
    std::vector<torch::Tensor> pieces;
    for (size_t j = 0; j < fields.size(); ++j) {
      auto it = std::find_if(fields[j].begin(), fields[j].end(), [&](const auto& f) { return f.first == key; });
      if (it == fields[j].end() || !isTensorOfShape(it->second, {lengths[j]}))
        throw std::runtime_error("the pieces' states disagree on '" + key + "'");
      pieces.push_back(it->second.toTensor());
    }
    value = torch::cat(pieces).view(shape);
  }
  return withFields(*parts.front(), joined);
}

// The state of elements [offset, offset + numel) of a tensor of `shape`, from its whole state.
std::unique_ptr<torch::optim::OptimizerParamState> sliceState(const torch::optim::OptimizerParamState& whole,
                                                              at::IntArrayRef shape, int64_t offset, int64_t numel) {
  Fields fields = fieldsOf(whole);
  for (auto& [key, value] : fields)
    if (isTensorOfShape(value, shape)) value = value.toTensor().reshape(-1).narrow(0, offset, numel).clone();
  return withFields(whole, fields);
}

}  // namespace

std::vector<std::vector<ShardPiece>> partitionFlat(const std::vector<int64_t>& numels, int world_size) {
  const int64_t world = std::max(world_size, 1);
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  const int64_t chunk = (total + world - 1) / world;
  std::vector<std::vector<ShardPiece>> pieces(static_cast<size_t>(world));
  int64_t start = 0;  // flat offset of tensor i
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t end = start + numels[i];
    for (int64_t at = start; at < end;) {
      const int64_t rank = at / chunk;
      const int64_t upto = std::min(end, (rank + 1) * chunk);
      pieces[static_cast<size_t>(rank)].push_back(ShardPiece{i, at - start, upto - at});
      at = upto;
    }
    start = end;
  }
  return pieces;
}

void DataParallel::Impl::partition() {
  owned.assign(params.size(), 0);
  owned_from.assign(params.size(), 0);
  if (!sharded()) {
    for (size_t i = 0; i < params.size(); ++i) owned[i] = params[i].numel();
    return;
  }
  std::vector<int64_t> numels;
  for (const auto& p : params) numels.push_back(p.numel());
  layout = partitionFlat(numels, world());
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  chunk = std::max<int64_t>(1, (total + world() - 1) / world());
  for (const auto& piece : layout[static_cast<size_t>(rank())]) {
    owned[piece.param] = piece.numel;
    owned_from[piece.param] = piece.offset;
  }
  pieces = pieceTensors(rank());
}

// ZeRO: copies this rank's range into its pieces with the averaged gradients, steps them and
// writes the result back into the parameters.
Status DataParallel::Impl::stepShard() {
  if (!inner) return {};
  torch::NoGradGuard no_grad;
  const auto& mine = layout[static_cast<size_t>(rank())];
  try {
    for (size_t k = 0; k < mine.size(); ++k) {
      pieces[k].copy_(pieceOf(mine[k]));
      const torch::Tensor& g = params[mine[k].param].grad();
      if (g.defined()) pieces[k].mutable_grad() = g.reshape(-1).narrow(0, mine[k].offset, mine[k].numel);
      else pieces[k].mutable_grad().reset();
    }
    inner->step();
    for (size_t k = 0; k < mine.size(); ++k) {
      pieceOf(mine[k]).copy_(pieces[k]);
      pieces[k].mutable_grad().reset();
    }
  } catch (const std::exception& e) {
    return makeError(Errc::Internal, "rank " + std::to_string(rank()) + ": optimiser step failed: " + shortWhat(e));
  }
  return {};
}

Status DataParallel::Impl::gatherParameters() {
  torch::NoGradGuard no_grad;
  const auto opts = params.front().options();
  auto mine = torch::zeros({chunk}, opts);
  int64_t off = 0;
  for (const auto& piece : layout[static_cast<size_t>(rank())]) {
    mine.narrow(0, off, piece.numel).copy_(pieceOf(piece));
    off += piece.numel;
  }
  std::vector<torch::Tensor> in{mine};
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int r = 0; r < world(); ++r) out[0].push_back(torch::empty({chunk}, opts));
  try {
    if (auto st = waitWork(ci, "parameter all-gather", ci.pg->allgather(out, in)); !st) return st;
  } catch (const std::exception& e) {
    return collectiveError(ci, "parameter all-gather", e);
  }
  for (int r = 0; r < world(); ++r) {
    if (r == rank()) continue;
    off = 0;
    for (const auto& piece : layout[static_cast<size_t>(r)]) {
      pieceOf(piece).copy_(out[0][static_cast<size_t>(r)].narrow(0, off, piece.numel));
      off += piece.numel;
    }
  }
  last.bytes_gathered = static_cast<int64_t>(world()) * chunk * static_cast<int64_t>(mine.element_size());
  return {};
}

Result<std::string> DataParallel::consolidatedOptimizerState() {
  Impl& d = *impl_;
  if (!d.sharded()) {
    if (!d.inner) return makeError(Errc::Internal, "DataParallel: no optimiser");
    return saveOptimizerState(*d.inner);
  }
  const std::string mine = d.inner ? saveOptimizerState(*d.inner) : std::string();
  auto all = d.comm.allGatherBytes(mine);
  if (!all) return all.error();
  auto full = d.factory(d.params);
  if (!full) return full.error();
  // Every rank's shard state, loaded into a throwaway optimiser over tensors shaped like its pieces.
  std::vector<std::unique_ptr<torch::optim::Optimizer>> shards;
  std::vector<std::vector<const torch::optim::OptimizerParamState*>> parts(d.params.size());
  std::vector<std::vector<int64_t>> lengths(d.params.size());
  for (int r = 0; r < d.world(); ++r) {
    const auto& bytes = (*all)[static_cast<size_t>(r)];
    const auto& layout = d.layout[static_cast<size_t>(r)];
    if (layout.empty() || bytes.empty()) continue;
    auto tensors = d.pieceTensors(r);
    auto shard = d.factory(tensors);
    if (!shard) return shard.error();
    if (auto st = wb::parallel::loadOptimizerState(**shard, bytes); !st)
      return makeError(Errc::Checkpoint, "optimiser shard of rank " + std::to_string(r) + ": " + st.error().message);
    const auto& state = (*shard)->state();
    for (size_t k = 0; k < layout.size(); ++k) {
      auto it = state.find(compat::optimizerStateKey(state, tensors[k]));
      if (it == state.end()) continue;  // not stepped yet (lazy state)
      parts[layout[k].param].push_back(it->second.get());
      lengths[layout[k].param].push_back(layout[k].numel);
    }
    shards.push_back(std::move(*shard));
  }
  auto& state = (*full)->state();
  for (size_t i = 0; i < d.params.size(); ++i) {
    if (parts[i].empty()) continue;
    const int64_t covered = std::accumulate(lengths[i].begin(), lengths[i].end(), int64_t{0});
    try {
      if (covered != d.params[i].numel()) throw std::runtime_error("the shards hold state for only part of it");
      state[compat::optimizerStateKey(state, d.params[i])] = joinStates(parts[i], lengths[i], d.params[i].sizes());
    } catch (const std::exception& e) {
      return makeError(Errc::Checkpoint, "rank " + std::to_string(d.rank()) + ": joining the optimiser state of parameter " +
                                             std::to_string(i) + " from its shards failed: " + shortWhat(e));
    }
  }
  return saveOptimizerState(**full);
}

Status DataParallel::loadOptimizerState(const std::string& bytes) {
  Impl& d = *impl_;
  if (!d.sharded()) {
    if (!d.inner) return makeError(Errc::Internal, "DataParallel: no optimiser");
    return wb::parallel::loadOptimizerState(*d.inner, bytes);
  }
  auto full = d.factory(d.params);
  if (!full) return full.error();
  if (auto st = wb::parallel::loadOptimizerState(**full, bytes); !st) return st;
  if (!d.inner) return {};
  auto& dst = d.inner->state();
  dst.clear();
  const auto& src = (*full)->state();
  const auto& mine = d.layout[static_cast<size_t>(d.rank())];
  for (size_t k = 0; k < mine.size(); ++k) {
    const torch::Tensor& p = d.params[mine[k].param];
    auto it = src.find(compat::optimizerStateKey(src, p));
    if (it == src.end()) continue;
    try {
      dst[compat::optimizerStateKey(dst, d.pieces[k])] = sliceState(*it->second, p.sizes(), mine[k].offset, mine[k].numel);
    } catch (const std::exception& e) {
      return makeError(Errc::Checkpoint, "rank " + std::to_string(d.rank()) + ": cutting the optimiser state of parameter " +
                                             std::to_string(mine[k].param) + " into this rank's shard failed: " + shortWhat(e));
    }
  }
  return {};
}

}  // namespace wb::parallel
