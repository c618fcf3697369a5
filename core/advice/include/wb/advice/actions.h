#pragma once
// What a verdict asks a person to run: the workbench-cli command its text names
// (`workbench-cli probe peak`), with what running it does in words, so a window can offer it as
// a button instead of a command to type. Qt-free.
#include <optional>
#include <string>

#include "wb/advice/advisor.h"

namespace wb::advice {

struct AdviceAction {
  std::string args;   // after workbench-cli: "probe peak"
  std::string label;  // "Measure this machine's peak"
};

// The first command the verdict's text names; nullopt when it names none.
std::optional<AdviceAction> actionOf(const Advice& advice);

}  // namespace wb::advice
