"""A plain PyTorch training loop on a slice of Fashion-MNIST, recorded with workbench_recorder.

    python3 train_fashion_mnist.py RUN_DIR [--epochs 3] [--limit-train 2000] [--limit-val 500] [--max-steps N]

The loop is what a user writes; the recorder adds batches() (the data wait), phase() (forward,
backward, optimizer), step(), eval() and epoch_end(). Reads the IDX files of
/usr/share/datasets/fashion-mnist (or --data) with the standard library and torch.
"""
import argparse
import gzip
import os
import struct
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from workbench_recorder import Recorder


def read_idx(path, limit):
    """An IDX file (gzip or plain) as a uint8 tensor of its first `limit` items."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        dims = struct.unpack(">" + "I" * (magic & 0xFF), f.read(4 * (magic & 0xFF)))
        count = min(dims[0], limit)
        item = 1
        for d in dims[1:]:
            item *= d
        data = f.read(count * item)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).reshape((count,) + tuple(dims[1:]))


def split(data_dir, prefix, limit):
    def find(kind):
        for name in (f"{prefix}-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz",
                     f"{prefix}-{kind}-idx{3 if kind == 'images' else 1}-ubyte"):
            if os.path.exists(os.path.join(data_dir, name)):
                return os.path.join(data_dir, name)
        sys.exit(f"{data_dir}: no {prefix} {kind} IDX file")
    images = read_idx(find("images"), limit).float().div_(255.0).unsqueeze(1)
    labels = read_idx(find("labels"), limit).long()
    return TensorDataset((images - 0.2860) / 0.3530, labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run_dir")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--limit-train", type=int, default=2000)
    p.add_argument("--limit-val", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: the epochs decide)")
    a = p.parse_args()
    torch.manual_seed(1)
    train, val = split(a.data, "train", a.limit_train), split(a.data, "t10k", a.limit_val)
    loader = DataLoader(train, batch_size=a.batch_size, shuffle=True, num_workers=a.workers)
    val_loader = DataLoader(val, batch_size=256)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    config = {"name": "python-fashion-mlp", "data": {"dataset": "fashion-mnist", "limit_train": a.limit_train,
                                                     "limit_val": a.limit_val},
              "model": {"name": "mlp-128"}, "optim": {"name": "sgd", "lr": a.lr, "momentum": 0.9},
              "train": {"epochs": a.epochs, "batch_size": a.batch_size, "log_every": 5},
              "speedups": {"workers": a.workers, "inference_eval": True}}
    with Recorder(a.run_dir, config) as rec:
        rec.start(model=model, batch_size=a.batch_size, steps_per_epoch=len(loader), total_steps=len(loader) * a.epochs,
                  dataset={"name": "fashion-mnist", "train": len(train), "val": len(val), "classes": 10,
                           "channels": 1, "image_size": 28})
        steps = 0
        for _ in range(a.epochs):
            model.train()
            for x, y in rec.batches(loader):
                if a.max_steps and steps >= a.max_steps:
                    break
                steps += 1
                with rec.phase("fwd"):
                    loss = loss_fn(model(x), y)
                with rec.phase("bwd"):
                    opt.zero_grad()
                    loss.backward()
                with rec.phase("opt"):
                    opt.step()
                rec.step(loss, batch_size=len(x), lr=opt.param_groups[0]["lr"])
            with rec.evaluating(), torch.inference_mode():
                model.eval()
                total, correct, n = 0.0, 0, 0
                for x, y in val_loader:
                    out = model(x)
                    total += loss_fn(out, y).item() * len(x)
                    correct += (out.argmax(1) == y).sum().item()
                    n += len(x)
            rec.eval(val_loss=total / n, val_acc=correct / n, samples=n)
            rec.epoch_end()
            if a.max_steps and steps >= a.max_steps:
                break
    print(f"recorded {a.run_dir}")


if __name__ == "__main__":
    main()
