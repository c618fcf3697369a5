#pragma once
// Whether a checkpoint can continue as the run a resume asks for, checked before anything of the
// run folder changes (`run --resume`): the resume rules of wb/common/resume_rules.h against the
// config the checkpoint was written with, then, where the model, the dataset or the image size
// changed, the parameter shapes the asked-for model has on the asked-for data against the
// checkpoint's. Errors are InvalidConfig (exit 2) naming the field and the fix; a dataset that
// cannot be opened is its own error (Data, exit 3).
#include <string>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/train/checkpoint.h"

namespace wb::train {

// `what` names the run folder; fineTune: run --fine-tune (another data.dataset is allowed).
Status checkCheckpointFits(const CheckpointData& checkpoint, const Config& config, const std::string& what,
                           bool fineTune);

}  // namespace wb::train
