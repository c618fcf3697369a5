#!/usr/bin/env python3
"""The workbench against the same workload written in plain PyTorch, on the same LibTorch.

What a PyTorch user would write for the workbench's default experiment: LeNet on Fashion-MNIST read
from the same IDX files, normalised the same way (mean 0.2860, std 0.3530), torch DataLoader
(shuffled, batch 64), SGD lr 0.01 momentum 0.5, torch.autocast for bf16, evaluation under
torch.inference_mode at batch 256. Each configuration runs as a fresh process (`workbench-cli run`
or this script with --plain), interleaved, and the table gives medians and ratios measured in one
run. Figures, each named for what it covers:
  train samples/s  training steps only (no evaluation, no start-up)
  process wall s   the whole process, from its start to its exit
  final val acc    after the last epoch, on the same validation images

    python3 tests/bench/side_by_side.py --cli build/app/cli/workbench-cli [--limit-train 12000]
        [--threads 2] [--precisions 32-true,bf16-mixed] [--repeats 3] [--workers 0]
packaging/torch2-check.sh --bench runs it in the Debian 13 root (PyTorch 2.6 and LibTorch 2.6 from
the same package). Not a test: it asserts nothing and never fails on a figure.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MEAN, STD = 0.2860, 0.3530


def read_idx(path):
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def idx_file(folder, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    sys.exit(f"side_by_side: {folder} has no {stem}[.gz] (an IDX folder such as /usr/share/datasets/fashion-mnist)")


def plain_run(a):
    """One plain PyTorch run; prints its figures as one JSON line."""
    t0 = time.monotonic()
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    def split(images, labels, limit):
        x = torch.from_numpy(read_idx(idx_file(a.data, images))[:limit].copy()).float().div_(255).sub_(MEAN).div_(STD)
        y = torch.from_numpy(read_idx(idx_file(a.data, labels))[:limit].astype("int64"))
        return TensorDataset(x.unsqueeze(1), y)

    train = split("train-images-idx3-ubyte", "train-labels-idx1-ubyte", a.limit_train or None)
    val = split("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", a.limit_val or None)

    from lenet_torch import LeNet  # beside this script

    net = LeNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.5)
    bf16 = a.precision == "bf16-mixed"
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=a.workers,
                        generator=torch.Generator().manual_seed(a.seed))
    train_s, samples = 0.0, 0
    for _ in range(a.epochs):
        net.train()
        it = iter(loader)
        while True:
            s0 = time.perf_counter()  # a step: fetch, forward, backward, update
            batch = next(it, None)
            if batch is None:
                break
            x, y = batch
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = F.cross_entropy(net(x).float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            train_s += time.perf_counter() - s0
            samples += x.shape[0]
    net.eval()
    correct = count = 0
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        for x, y in DataLoader(val, batch_size=256):
            correct += int((net(x).float().argmax(1) == y).sum())
            count += x.shape[0]
    print(json.dumps({"train_samples_per_s": samples / train_s, "final_val_acc": correct / count,
                      "loss_finite": bool(torch.isfinite(loss).item()), "torch": torch.__version__,
                      "mkldnn": torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled,
                      "inner_wall_s": time.monotonic() - t0}))


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, time.monotonic() - t0


def workbench_run(a, precision):
    with tempfile.TemporaryDirectory(prefix="wb-side-") as d:
        sets = {"data.dataset": "idx:" + a.data, "data.limit_train": a.limit_train, "data.limit_val": a.limit_val,
                "train.threads": a.threads, "train.epochs": a.epochs, "speedups.workers": a.workers,
                "speedups.precision": precision, "seed": a.seed}
        cmd = [a.cli, "run", "--run-dir", os.path.join(d, "run")]
        for k, v in sets.items():
            cmd += ["--set", f"{k}={v}"]
        p, wall = timed(cmd)
        try:
            with open(os.path.join(d, "run", "summary.json")) as f:
                s = json.load(f)
            with open(os.path.join(d, "run", "events.jsonl")) as f:
                start = next((json.loads(l) for l in f if '"type":"start"' in l), {})
        except OSError:
            sys.exit(f"side_by_side: workbench-cli run failed ({p.returncode}): {p.stderr[-2000:]}")
        check = start.get("backend_check", {})
        return {"train_samples_per_s": s.get("train_samples_per_s", float("nan")),
                "final_val_acc": s.get("final_val_acc", float("nan")), "wall_s": wall, "status": s.get("status"),
                "contended": s.get("cpu", {}).get("contended"), "mkldnn_disabled": check.get("mkldnn_disabled"),
                "libtorch": start.get("versions", {}).get("libtorch")}


def plain(a, precision):
    cmd = [sys.executable, os.path.abspath(__file__), "--plain", "--data", a.data, "--limit-train", str(a.limit_train),
           "--limit-val", str(a.limit_val), "--threads", str(a.threads), "--epochs", str(a.epochs),
           "--workers", str(a.workers), "--precision", precision, "--seed", str(a.seed)]
    p, wall = timed(cmd)
    if p.returncode != 0:
        sys.exit(f"side_by_side: the plain PyTorch run failed ({p.returncode}): {p.stderr[-2000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall_s"] = wall
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/app/cli/workbench-cli")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--limit-train", type=int, default=12000)
    ap.add_argument("--limit-val", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--precisions", default="32-true,bf16-mixed")
    ap.add_argument("--precision", default="32-true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plain", action="store_true", help="one plain PyTorch run (internal)")
    a = ap.parse_args()
    if a.plain:
        return plain_run(a)

    precisions = a.precisions.split(",")
    runs = {(p, who): [] for p in precisions for who in ("wb", "py")}
    load0 = os.getloadavg()[0]
    for _ in range(a.repeats):  # interleaved rounds: drift on a shared machine hits both alike
        for p in precisions:
            runs[(p, "wb")].append(workbench_run(a, p))
            runs[(p, "py")].append(plain(a, p))
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    py0 = runs[(precisions[0], "py")][0]
    print(f"\nSide by side: workbench-cli run vs plain PyTorch {py0['torch']} (same process model: one fresh process "
          f"per run), lenet on {a.data}, {a.limit_train} train / {a.limit_val} val, batch 64, {a.threads} thread(s), "
          f"{a.workers} loader worker(s), {a.epochs} epoch(s); medians of {a.repeats} interleaved rounds")
    print(f"LibTorch (workbench): {runs[(precisions[0], 'wb')][0]['libtorch']}; load average {load0:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end on {os.cpu_count()} cores")
    hdr = ("precision", "wb train samples/s", "py train samples/s", "wb/py train", "wb process s", "py process s",
           "py/wb process", "wb val acc", "py val acc")
    print("| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr))
    for p in precisions:
        wb, py = runs[(p, "wb")], runs[(p, "py")]
        ws, ps = med(wb, "train_samples_per_s"), med(py, "train_samples_per_s")
        ww, pw = med(wb, "wall_s"), med(py, "wall_s")
        print(f"| {p} | {ws:.0f} | {ps:.0f} | {ws / ps:.2f} | {ww:.1f} | {pw:.1f} | {pw / ww:.2f} | "
              f"{med(wb, 'final_val_acc'):.4f} | {med(py, 'final_val_acc'):.4f} |")
    notes = []
    if any(r["contended"] for k, rs in runs.items() if k[1] == "wb" for r in rs):
        notes.append("the workbench reported its runs contended (other processes used >= 0.3 cores): both sides "
                     "ran under that load, interleaved, so the ratios hold better than the absolute figures")
    if any(r["mkldnn_disabled"] for k, rs in runs.items() if k[1] == "wb" for r in rs):
        notes.append("the workbench's start-up check switched oneDNN off in some runs (this LibTorch computed wrong "
                     "convolutions with it); the plain script kept oneDNN on")
    bad = [k[0] for k, rs in runs.items() if k[1] == "py" for r in rs if not r["loss_finite"]]
    if bad:
        notes.append(f"the plain script's loss went non-finite in {len(bad)} run(s) ({', '.join(sorted(set(bad)))}): "
                     "its accuracy there is not a result")
    for n in notes:
        print("note: " + n)


if __name__ == "__main__":
    main()
