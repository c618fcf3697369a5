#!/usr/bin/env python3
"""The GPU workload of packaging/gpu-check.sh written in plain PyTorch: what a PyTorch user writes for
the workbench's run of the same settings.

resnet18 with the workbench's CIFAR stem (3x3 conv, stride 1, no max-pool; He-normal fan-out conv
init) on an ImageFolder of 32x32 PNGs written by `workbench-cli dataset export`; torchvision's
RandomResizedCrop(32) as the workbench applies to folder datasets; normalised by the training set's
mean and std; SGD lr 0.01 momentum 0.5; batch 128; torch DataLoader with N workers and pinned memory;
torch.autocast fp16 + GradScaler; --steps training steps, then one evaluation under inference_mode.
Prints one JSON line: train_samples_per_s (training steps only, after --warmup steps; CUDA synced at
the ends of the timed span), val_acc, process_s (from the start of the process).

    python3 tests/bench/gpu_plain_torch.py --data /tmp/c10 [--steps 300] [--workers 4] [--precision 16-mixed]
"""
import argparse
import json
import os
import time

T0 = time.monotonic()

import torch
import torch.nn as nn
import torch.nn.functional as F


def args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="an ImageFolder root with train/ and test/")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--precision", default="16-mixed", choices=["32-true", "16-mixed", "bf16-mixed"])
    ap.add_argument("--limit-val", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = self.down(x) if self.down is not None else x
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + idt)


class ResNet18(nn.Module):  # core/model/src/nets.cpp, the CIFAR stem (images under 64 px)
    def __init__(self, channels, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        stages, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            stages.append(nn.Sequential(Block(cin, cout, stride), Block(cout, cout, 1)))
            cin = cout
        self.layers = nn.Sequential(*stages)
        self.fc = nn.Linear(512, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def datasets(root, limit_val):
    from torchvision import datasets as tvd, transforms as T

    probe = tvd.ImageFolder(os.path.join(root, "train"), transform=T.ToTensor())
    channels = probe[0][0].shape[0]
    sample = torch.stack([probe[i][0] for i in range(0, len(probe), max(1, len(probe) // 1000))])
    mean, std = sample.mean(dim=(0, 2, 3)).tolist(), sample.std(dim=(0, 2, 3)).tolist()
    gray = [T.Grayscale(1)] if channels == 1 else []
    train = tvd.ImageFolder(os.path.join(root, "train"),
                            transform=T.Compose(gray + [T.RandomResizedCrop(32), T.ToTensor(), T.Normalize(mean, std)]))
    val = tvd.ImageFolder(os.path.join(root, "test"), transform=T.Compose(gray + [T.ToTensor(), T.Normalize(mean, std)]))
    if limit_val:
        val = torch.utils.data.Subset(val, range(min(limit_val, len(val))))
    return train, val, channels, len(probe.classes)


def loaders(a, train, val):
    from torch.utils.data import DataLoader

    kw = dict(num_workers=a.workers, pin_memory=True, persistent_workers=a.workers > 0)
    return (DataLoader(train, batch_size=a.batch, shuffle=True, drop_last=True,
                       generator=torch.Generator().manual_seed(a.seed), **kw),
            DataLoader(val, batch_size=256, **kw))


def autocast_dtype(precision):
    return {"16-mixed": torch.float16, "bf16-mixed": torch.bfloat16}.get(precision)


def main():
    a = args()
    if not torch.cuda.is_available():
        raise SystemExit("gpu_plain_torch: no CUDA device")
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    train, val, channels, classes = datasets(a.data, a.limit_val)
    tl, vl = loaders(a, train, val)
    net = ResNet18(channels, classes).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.5)
    dt = autocast_dtype(a.precision)
    scaler = torch.amp.GradScaler("cuda", enabled=dt == torch.float16)
    step, t_start, timed = 0, None, 0
    while step < a.steps:
        for x, y in tl:
            if step == a.warmup:
                torch.cuda.synchronize()
                t_start = time.perf_counter()
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            with torch.autocast("cuda", dtype=dt or torch.float32, enabled=dt is not None):
                loss = F.cross_entropy(net(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            step += 1
            if step > a.warmup:
                timed += x.shape[0]
            if step >= a.steps:
                break
    torch.cuda.synchronize()
    train_s = time.perf_counter() - t_start
    net.eval()
    correct = count = 0
    with torch.inference_mode(), torch.autocast("cuda", dtype=dt or torch.float32, enabled=dt is not None):
        for x, y in vl:
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            correct += int((net(x).argmax(1) == y).sum())
            count += x.shape[0]
    print(json.dumps({"who": "plain PyTorch", "torch": torch.__version__, "steps": step,
                      "train_samples_per_s": timed / train_s, "val_acc": correct / count,
                      "process_s": time.monotonic() - T0}))


if __name__ == "__main__":
    main()
