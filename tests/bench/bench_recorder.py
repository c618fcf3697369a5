"""What the Python recorder costs per training step: a loop timed with and without it.

    PYTHONPATH=app/python python3 tests/bench/bench_recorder.py [--steps 20000] [--log-every 50] [--lightning]

The loop body is empty (a list as the loader), so the difference is the recorder's own work:
batches() and its clock, phase() around forward / backward / optimizer, step(), and the step
event every --log-every steps (memory, CPU shares, one line written and flushed). With torch
installed the loss is a tensor, as in a real loop (one tensor add per step, read at the interval).

--lightning: the Lightning callback's cost instead, as a user meets it: Trainer.fit of a one-layer
model over --steps batches of 8 samples, with and without WorkbenchCallback, interleaved; the
difference per step is every hook the callback adds (batch start/end, backward, validation).
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


def lightning_fit(steps, log_every, with_callback):
    """Seconds of one Trainer.fit of `steps` tiny batches (one epoch), the callback on or off."""
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl
    from torch.utils.data import DataLoader, TensorDataset

    from workbench_recorder.lightning import WorkbenchCallback

    class Tiny(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 2)

        def training_step(self, batch, _):
            x, y = batch
            return torch.nn.functional.cross_entropy(self.layer(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    data = DataLoader(TensorDataset(torch.randn(steps * 8, 4), torch.randint(0, 2, (steps * 8,))), batch_size=8)
    with tempfile.TemporaryDirectory() as d:
        callbacks = [WorkbenchCallback(d + "/run", {"name": "bench"}, log_every=log_every)] if with_callback else []
        trainer = pl.Trainer(max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False, callbacks=callbacks)
        began = time.perf_counter()
        trainer.fit(Tiny(), data)
        return time.perf_counter() - began


def lightning_table(a):
    plain_s, cb_s = [], []
    for _ in range(a.repeats):  # interleaved: drift hits both alike
        plain_s.append(lightning_fit(a.steps, a.log_every, False))
        cb_s.append(lightning_fit(a.steps, a.log_every, True))
    diffs = [(c - p) / a.steps * 1e6 for p, c in zip(plain_s, cb_s)]
    print(f"Lightning Trainer.fit, {a.steps} steps, {a.repeats} interleaved pairs: without the callback "
          f"{statistics.median(plain_s) / a.steps * 1e6:.0f} us/step, with it {statistics.median(cb_s) / a.steps * 1e6:.0f} "
          f"us/step; the callback's cost {statistics.median(diffs):.1f} us/step (median of pairs; range "
          f"{min(diffs):.1f} to {max(diffs):.1f}), a step event every {a.log_every}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--lightning", action="store_true", help="the Lightning callback's cost per step")
    a = p.parse_args()
    if a.lightning:
        return lightning_table(a)
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
