#pragma once
// The host's own speed, checked beside each run: a fixed small CPU kernel (a dependent
// multiply-add over 64 KiB of floats, 96 passes, one thread) timed before training and after it. A host that changes speed while
// a run trains (these shared machines flip between two speeds for a minute or more) makes the
// run's times say nothing about the configuration; the report layer flags a run whose two
// timings differ by more than the host's noise band (wb/compare/compare.h, hostSpeedNote) and
// takes no speedup from it. Best of 5: interference only adds time, so the minimum is the
// host's speed. One thread on the CPU whatever the run's device (the run's thread team would
// time itself, not the host); a few ms each. Thread affinity: the calling (training) thread.
namespace wb::train {

// Milliseconds of the kernel (best of 5), after one untimed warm-up.
double timeHostKernel();

}  // namespace wb::train
