"""A training loop without torch (standard library only), recorded with workbench_recorder: for
the tests that need a recorder's run folder but not a model (the window's history, old and new
writers). Loss falls and accuracy rises by a fixed rule, so the tests know the figures.

    python3 fake_loop.py RUN_DIR [--epochs 3] [--steps 20] [--batch 32] [--data-ms 2] [--step-ms 3]
"""
import argparse
import time

from workbench_recorder import Recorder


def batches(steps, data_ms):
    for i in range(steps):
        time.sleep(data_ms / 1000.0)  # a loader that keeps the step waiting
        yield i


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run_dir")
    p.add_argument("--name", default="fake-loop")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--data-ms", type=float, default=2.0)
    p.add_argument("--step-ms", type=float, default=3.0)
    a = p.parse_args()
    config = {"name": a.name, "model": {"name": "none"}, "train": {"epochs": a.epochs, "batch_size": a.batch,
                                                                   "log_every": 5},
              "speedups": {"workers": 0}}
    with Recorder(a.run_dir, config) as rec:
        rec.start(batch_size=a.batch, steps_per_epoch=a.steps, total_steps=a.steps * a.epochs)
        for epoch in range(1, a.epochs + 1):
            for i in rec.batches(batches(a.steps, a.data_ms)):
                with rec.phase("fwd"):
                    time.sleep(a.step_ms / 1000.0)
                rec.step(2.0 / (epoch + i / a.steps), lr=0.1)
            with rec.evaluating():
                time.sleep(0.01)
            rec.eval(val_loss=1.0 / epoch, val_acc=0.5 + 0.1 * epoch, samples=100)
            rec.epoch_end()


if __name__ == "__main__":
    main()
