#pragma once
// The values of the config's enum-like fields, as data: the validator (config.cpp), the window's
// combo boxes (ui/setup), the CLI's help text and `capabilities` all read these tables, so a
// new optimiser or precision is added in one place. std-only.
#include <string>
#include <vector>

namespace wb {

struct Choice {
  const char* value;              // as written in the config ("bf16-mixed")
  const char* label;              // for a combo box ("bf16 mixed")
  const char* help;               // one line: what it does
  bool needs_cuda = false;        // refused on a machine without CUDA (machineConfigErrors)
  const char* without_cuda = "";  // needs_cuda: what to do instead on such a machine
};

// model.name: the built-in nets (a TorchScript file is model.name = torchscript:<file.pt>).
const std::vector<Choice>& modelChoices();
const std::vector<Choice>& optimizerChoices();    // optim.name
const std::vector<Choice>& scheduleChoices();     // optim.schedule
const std::vector<Choice>& lrScalingChoices();    // optim.lr_scaling
const std::vector<Choice>& precisionChoices();    // speedups.precision
const std::vector<Choice>& shardingChoices();     // speedups.sharding
const std::vector<Choice>& decodedCacheChoices(); // speedups.decoded_cache
const std::vector<Choice>& monitorChoices();      // speedups.early_stopping.monitor
const std::vector<Choice>& modeChoices();         // speedups.early_stopping.mode
// data.dataset: "fashion-mnist" itself, or one of the kinds as "<kind>:<dir>" (value = kind).
const std::vector<Choice>& datasetKinds();

// The values code compares against (the tables above hold them all, with their words).
namespace choice {
inline constexpr const char* kFp32 = "32-true";           // speedups.precision
inline constexpr const char* kBf16Mixed = "bf16-mixed";
inline constexpr const char* kFp16Mixed = "16-mixed";
inline constexpr const char* kMonitorValLoss = "val_loss";  // speedups.early_stopping.monitor
inline constexpr const char* kMonitorValAcc = "val_acc";
inline constexpr const char* kModeMin = "min";              // speedups.early_stopping.mode
inline constexpr const char* kModeMax = "max";
}  // namespace choice

// The entry of `value`, or nullptr.
const Choice* findChoice(const std::vector<Choice>& choices, const std::string& value);
// "sgd, adam, adamw, adadelta" (the values in table order, joined by sep).
std::string choiceValues(const std::vector<Choice>& choices, const char* sep = ", ");

// The one wording of "this needs CUDA": "needs CUDA; <instead>" (instead: what to do, or what
// happens, without it).
std::string needsCuda(const std::string& instead);

}  // namespace wb
