#pragma once
// Numbers and ranks in messages: the one way core/common writes a double, or names the rank a
// message comes from, for a person to read.
#include <string>

#include "wb/common/result.h"

namespace wb {

// A duration a person types: "90" or "90s" (seconds), "10m", "1.5h", "1h30m". InvalidConfig
// naming `option` and the forms it takes for anything else, or for zero or less.
Result<double> parseDuration(const std::string& text, const std::string& option);

// Up to 6 significant digits, no trailing zeros: 0.01, 1e-06, 65536.
std::string shortNumber(double v);

// "rank N: message", unless the message already begins with "rank N" (a message handed up
// through several layers names its rank once, not once per layer).
std::string prefixedByRank(int rank, const std::string& message);

// The value of `key` in Slurm's one-line "Key=Value Key=Value" output (`scontrol show job -o`,
// `sacct`): "" when absent.
std::string slurmField(const std::string& text, const std::string& key);

// Numbers for people, one decimal style everywhere (every table, message and label).
std::string fmtSeconds(double s);            // "0.84 s", "12.3 s", "4 min 05 s", "1 h 02 min"
std::string fmtSpeedup(double x);            // "1.85×"
std::string fmtAccuracy(double acc01);       // 0.8412 -> "84.12 %"
std::string fmtPp(double pp);                // "+0.35 pp", "−1.20 pp", "±0.00 pp"
std::string fmtBytes(double bytes);          // "312 MiB", "1.42 GiB"
std::string fmtRate(double perSecond);       // "8123/s", "12.4k/s"
std::string fmtRatio(double x);              // "0.82×" (memory ratio; same style as speedup)
std::string fmtFixed(double v, int decimals);
std::string fmtEdge(double x);               // an interval's edge: "0.93", "140", "∞" (1000 and past)

}  // namespace wb
