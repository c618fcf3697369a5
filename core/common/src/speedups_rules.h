#pragma once
// The rules of each speedup's descriptor past its fields: its value on this machine, when it
// cannot help, its words, how tune searches it and how it is handed over (wb/common/speedups.h).
// Private to speedups.cpp.
#include <string>
#include <vector>

#include "wb/common/speedups.h"

namespace wb::rules {

std::string onOff(bool on);

void describeWorkers(Speedup& s);
void describePinMemory(Speedup& s);
void describeDevices(Speedup& s);
void describePrecision(Speedup& s);
void describeEarlyStopping(Speedup& s);
void describeSharding(Speedup& s);
void describeInferenceEval(Speedup& s);

// The levers past the recipe's seven, whole.
std::vector<Speedup> levers();

}  // namespace wb::rules
