#pragma once
// The ranges of the config's bounded number fields, once: the validator (config.cpp) checks
// them and the window's spin boxes (ui/setup) take their bounds from them. std-only.
#include <string>

namespace wb {

struct Range {
  double min;
  double max;
  bool max_included;  // [min, max] or [min, max)
  bool contains(double v) const { return v >= min && (max_included ? v <= max : v < max); }
  // "[0, 1)": the validator's words.
  std::string text() const {
    auto num = [](double v) {
      std::string s = std::to_string(v);
      s.erase(s.find_last_not_of('0') + 1);
      if (!s.empty() && s.back() == '.') s.pop_back();
      return s;
    };
    return "[" + num(min) + ", " + num(max) + (max_included ? "]" : ")");
  }
};

namespace range {
inline constexpr Range kMomentum{0.0, 1.0, false};         // optim.momentum
inline constexpr Range kWarmupFraction{0.0, 1.0, false};   // optim.warmup_fraction
inline constexpr Range kLrScalingWarmup{0.0, 1.0, false};  // optim.lr_scaling_warmup
}  // namespace range

}  // namespace wb
