#!/usr/bin/env python3
"""The GPU workload of packaging/gpu-check.sh in PyTorch Lightning: the same model, data, loaders and
hyperparameters as gpu_plain_torch.py (imported from it), trained by a Lightning Trainer
(precision "16-mixed", max_steps, no checkpoints, no logger, no progress bar). Prints one JSON line:
train_samples_per_s (training steps only after --warmup, timed by a callback with CUDA synced),
val_acc, process_s.

    python3 tests/bench/gpu_lightning.py --data /tmp/c10 [--steps 300] [--workers 4]
"""
import json
import os
import sys
import time

T0 = time.monotonic()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch
import torch.nn.functional as F

import gpu_plain_torch as plain

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl


class Module(pl.LightningModule):
    def __init__(self, channels, classes):
        super().__init__()
        self.net = plain.ResNet18(channels, classes)
        self.correct = self.count = 0

    def training_step(self, batch, _):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def test_step(self, batch, _):
        x, y = batch
        self.correct += int((self.net(x).argmax(1) == y).sum())
        self.count += x.shape[0]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.5)


class Timer(pl.Callback):
    def __init__(self, warmup):
        self.warmup, self.samples, self.t = warmup, 0, None

    def on_train_batch_start(self, trainer, module, batch, idx):
        if trainer.global_step == self.warmup and self.t is None:
            torch.cuda.synchronize()
            self.t = time.perf_counter()

    def on_train_batch_end(self, trainer, module, outputs, batch, idx):
        if self.t is not None:
            self.samples += batch[0].shape[0]

    def on_train_end(self, trainer, module):
        torch.cuda.synchronize()
        self.seconds = time.perf_counter() - self.t


def main():
    a = plain.args()
    if not torch.cuda.is_available():
        raise SystemExit("gpu_lightning: no CUDA device")
    pl.seed_everything(a.seed, verbose=False)
    train, val, channels, classes = plain.datasets(a.data, a.limit_val)
    tl, vl = plain.loaders(a, train, val)
    model, timer = Module(channels, classes), Timer(a.warmup)
    precision = {"16-mixed": "16-mixed", "bf16-mixed": "bf16-mixed"}.get(a.precision, "32-true")
    trainer = pl.Trainer(accelerator="gpu", devices=1, precision=precision, max_steps=a.steps, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         num_sanity_val_steps=0, limit_val_batches=0, callbacks=[timer])
    trainer.fit(model, tl)
    trainer.test(model, vl, verbose=False)
    print(json.dumps({"who": "PyTorch Lightning", "lightning": pl.__version__, "torch": torch.__version__,
                      "steps": trainer.global_step, "train_samples_per_s": timer.samples / timer.seconds,
                      "val_acc": model.correct / max(1, model.count), "process_s": time.monotonic() - T0}))


if __name__ == "__main__":
    main()
