#include "wb/advice/actions.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace wb::advice {

std::optional<AdviceAction> actionOf(const Advice& advice) {
  static const std::vector<std::pair<std::string, std::string>> kWords{
      {"probe peak", "Measure this machine's peak"},
      {"probe workers", "Measure the best loader workers"},
      {"noise", "Measure this machine's noise"}};
  const std::string mark = "`workbench-cli ";
  const size_t at = advice.text.find(mark);
  const size_t end = at == std::string::npos ? at : advice.text.find('`', at + mark.size());
  if (end == std::string::npos) return std::nullopt;
  AdviceAction a;
  a.args = advice.text.substr(at + mark.size(), end - at - mark.size());
  const auto words = std::find_if(kWords.begin(), kWords.end(), [&](const auto& w) { return w.first == a.args; });
  a.label = words != kWords.end() ? words->second : "Run workbench-cli " + a.args;
  return a;
}

}  // namespace wb::advice
