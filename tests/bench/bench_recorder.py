"""What the Python recorder costs per training step: a loop timed with and without it.

    PYTHONPATH=app/python python3 tests/bench/bench_recorder.py [--steps 20000] [--log-every 50]

The loop body is empty (a list as the loader), so the difference is the recorder's own work:
batches() and its clock, phase() around forward / backward / optimizer, step(), and the step
event every --log-every steps (memory, CPU shares, one line written and flushed). With torch
installed the loss is a tensor, as in a real loop (one tensor add per step, read at the interval).
"""
import argparse
import statistics
import tempfile
import time

from workbench_recorder import Recorder

try:
    import torch
except ImportError:
    torch = None


def plain(steps, loss):
    began = time.perf_counter()
    for _ in range(steps):
        pass
    return time.perf_counter() - began


def recorded(steps, loss, log_every, phases):
    with tempfile.TemporaryDirectory() as d, Recorder(d + "/run", {"name": "bench"}, log_every=log_every) as rec:
        rec.start(batch_size=64)
        began = time.perf_counter()
        for _ in rec.batches(range(steps)):
            if phases:
                with rec.phase("fwd"):
                    pass
                with rec.phase("bwd"):
                    pass
                with rec.phase("opt"):
                    pass
            rec.step(loss, batch_size=64, lr=0.1)
        return time.perf_counter() - began


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    loss = torch.tensor(0.5) if torch is not None else 0.5
    base = min(plain(a.steps, loss) for _ in range(a.repeats))
    for phases in (False, True):
        times = [recorded(a.steps, loss, a.log_every, phases) for _ in range(a.repeats)]
        per_step = (min(times) - base) / a.steps * 1e6
        spread = (statistics.median(times) - base) / a.steps * 1e6
        what = "batches() + 3 phase() + step()" if phases else "batches() + step()"
        print(f"{what:32s} {per_step:7.1f} us/step (best of {a.repeats}; median {spread:.1f}), "
              f"loss as {'a tensor' if torch is not None else 'a float'}, a step event every {a.log_every}")


if __name__ == "__main__":
    main()
