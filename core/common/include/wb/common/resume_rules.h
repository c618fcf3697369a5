#pragma once
// What a resumed run may not change, in one wording wherever it is checked: by `run --resume`
// before the run folder is touched (app/cli, core/launch: against the run's events and
// config.json; core/train's checkCheckpointFits against the checkpoint's parameter shapes) and
// by each rank against the checkpoint it loads (core/train). `what` names the
// run folder or the checkpoint file. Errors are InvalidConfig (exit 2) naming the field.
#include <cstdint>
#include <string>

#include "wb/common/result.h"

namespace wb {

// --from: "last" (checkpoints/last.pt) or "best" (checkpoints/best.pt).
Status checkResumeFrom(const std::string& from);
// A run that has trained `trained` whole epochs has nothing left to train at train.epochs <= it.
Status checkEpochsLeft(const std::string& what, int64_t trained, int epochs);
// Optimiser state belongs to the optimiser that wrote it (`was`; empty: unknown, allowed).
Status checkSameOptimizer(const std::string& what, const std::string& was, const std::string& asked);
// The weights belong to the model that wrote them (`was` the run's model.name; empty: unknown,
// allowed). One TorchScript file for another is left to the parameter shapes (core/train).
Status checkSameModel(const std::string& what, const std::string& was, const std::string& asked);
// Whether two data.dataset specs name the same data: "fashion-mnist" is idx:<its folder>, and a
// folder is compared by its absolute, normalised path.
bool sameDataset(const std::string& a, const std::string& b);
// A resume trains on the data it trained on; another data.dataset only with `fineTune`
// (run --fine-tune), which the run then records. --fine-tune without another dataset is refused.
Status checkSameDataset(const std::string& what, const std::string& was, const std::string& asked, bool fineTune);

}  // namespace wb
