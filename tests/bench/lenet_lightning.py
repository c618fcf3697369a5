#!/usr/bin/env python3
"""The workbench's default experiment written as a PyTorch Lightning user would: LeNet on
Fashion-MNIST (the IDX files, normalised with mean 0.2860 and std 0.3530), batch 64, SGD lr 0.01
momentum 0.5, validation after every epoch under Lightning's inference mode at batch 256, recorded
by the workbench's Lightning callback (no change to the module). Lightning's defaults otherwise,
less what writes elsewhere or prints (logger, checkpoints, progress bar) and its sanity-check
validation (the workbench's run has none).

    python3 tests/bench/lenet_lightning.py RUN_DIR [--epochs 1] [--limit-train 0] [--limit-val 0]
        [--batch-size 64] [--lr 0.01] [--workers 0] [--precision 32-true] [--threads 0] [--seed 1]
        [--no-callback]

Its flags take the workbench's placeholders, so `workbench-cli try` runs it as the variant against
the workbench's own run of the same config (tests/bench/bench_lightning.sh):

    workbench-cli try --variant-command 'python3 tests/bench/lenet_lightning.py {run_dir}
        --epochs {train.epochs} --limit-train {data.limit_train} --limit-val {data.limit_val}
        --batch-size {train.batch_size} --lr {optim.lr} --workers {workers} --precision {precision}
        --threads {train.threads} --seed {seed}'
"""
import argparse
import os
import sys
import time

T0 = time.monotonic()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "app", "python"))  # train_fashion_mnist: the IDX reader

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl

from lenet_torch import LeNet
from train_fashion_mnist import split
from workbench_recorder.lightning import WorkbenchCallback


class Classifier(pl.LightningModule):
    def __init__(self, lr, momentum):
        super().__init__()
        self.net, self.lr, self.momentum = LeNet(), lr, momentum

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x).float(), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        out = self.net(x).float()
        self.log("val_loss", F.cross_entropy(out, y), on_epoch=True, batch_size=len(x))
        self.log("val_acc", (out.argmax(1) == y).float().mean(), on_epoch=True, batch_size=len(x))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=self.momentum)


def options():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--limit-train", type=int, default=0, help="0: all 60000")
    p.add_argument("--limit-val", type=int, default=0, help="0: all 10000")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.5)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--precision", default="32-true")
    p.add_argument("--threads", type=int, default=0, help="0: torch's default")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-callback", action="store_true", help="train without the recorder (its cost)")
    a = p.parse_args()
    if a.data == "fashion-mnist":  # the workbench's name for the packaged files ({data.dataset})
        a.data = "/usr/share/datasets/fashion-mnist"
    elif a.data.startswith("idx:"):
        a.data = a.data[4:]
    if not os.path.isdir(a.data):
        p.error(f"--data {a.data}: not a folder of IDX files (fashion-mnist, idx:<dir> or <dir>)")
    return a


def main():
    a = options()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    pl.seed_everything(a.seed, verbose=False)
    big = 1 << 30
    train = split(a.data, "train", a.limit_train or big)
    val = split(a.data, "t10k", a.limit_val or big)
    loader = DataLoader(train, batch_size=a.batch_size, shuffle=True, num_workers=a.workers,
                        persistent_workers=a.workers > 0)
    val_loader = DataLoader(val, batch_size=256, num_workers=a.workers, persistent_workers=a.workers > 0)
    config = {"name": "lenet in Lightning", "model": {"name": "lenet"},
              "data": {"dataset": "fashion-mnist", "limit_train": a.limit_train, "limit_val": a.limit_val},
              "optim": {"name": "sgd", "lr": a.lr, "momentum": a.momentum}, "seed": a.seed,
              "train": {"threads": a.threads, "eval_batch_size": 256}}
    callbacks = [] if a.no_callback else [WorkbenchCallback(a.run_dir, config)]
    trainer = pl.Trainer(max_epochs=a.epochs, accelerator="cpu", devices=1, precision=a.precision, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         num_sanity_val_steps=0, callbacks=callbacks)
    began = time.monotonic()
    trainer.fit(Classifier(a.lr, a.momentum), loader, val_loader)
    print(f"lenet_lightning: fit {time.monotonic() - began:.2f} s, process {time.monotonic() - T0:.2f} s, "
          f"val_acc {float(trainer.callback_metrics.get('val_acc', float('nan'))):.4f}", flush=True)


if __name__ == "__main__":
    main()
