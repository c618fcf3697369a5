#pragma once
// Internal to wb_model: the TorchScript side of createModel().
#include <memory>
#include <string>

#include "wb/common/result.h"
#include "wb/model/model.h"

namespace wb::model::detail {

// Loads <path> with torch::jit::load and checks it on a dummy batch of spec's shape.
Result<std::unique_ptr<Model>> loadTorchScriptModel(const std::string& path, const ModelSpec& spec);

}  // namespace wb::model::detail
