"""Reads what `workbench-cli export --format tensorboard` wrote, independently of the workbench:
the TFRecord framing and its masked CRC-32C checked here, the Event messages decoded by Python's
protobuf (Debian's python3-protobuf) with classes protoc generates from the .proto file given,
and every value compared with the run folder's own files (events.jsonl, config.json,
summary.json).

    python3 read_tfevents.py PROTO OUT_DIR RUN_DIR=NAME [RUN_DIR=NAME ...]

Prints a JSON summary per run; exits 1 with the mismatches it found. expected_scalars() is what
each run's events.jsonl says TensorBoard should show (tensorboard_reader.py uses it too).
"""
import glob
import importlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

FILE_VERSION = "brain.Event:2"
MIB = 1024.0 * 1024.0


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path):
    """The payloads of a TFRecord file; ValueError naming the record whose framing or CRC is off."""
    with open(path, "rb") as f:
        data = f.read()
    out, at = [], 0
    while at < len(data):
        if len(data) - at < 12:
            raise ValueError(f"{path}: record {len(out)}: truncated header")
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked_crc32c(header):
            raise ValueError(f"{path}: record {len(out)}: the length's CRC is off")
        payload = data[at + 12:at + 12 + length]
        if len(payload) != length or len(data) < at + 16 + length:
            raise ValueError(f"{path}: record {len(out)}: truncated payload")
        (payload_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if payload_crc != masked_crc32c(payload):
            raise ValueError(f"{path}: record {len(out)}: the payload's CRC is off")
        out.append(payload)
        at += 16 + length
    return out


def load_messages(proto):
    """The module protoc generates from `proto` (--python_out into a scratch folder)."""
    out = tempfile.mkdtemp(prefix="tfevents-py-")
    subprocess.run(["protoc", "-I" + os.path.dirname(os.path.abspath(proto)), "--python_out=" + out,
                    os.path.abspath(proto)], check=True)
    sys.path.insert(0, out)
    return importlib.import_module(os.path.splitext(os.path.basename(proto))[0] + "_pb2")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def read_events(run_dir):
    with open(os.path.join(run_dir, "events.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def expected_scalars(run_dir):
    """{tag: [(step, float32 value, wall_time)]} from rank 0's step, eval and epoch events."""
    events = read_events(run_dir)
    offset = next((e["wall"] - e.get("t", 0) for e in events if _number(e.get("wall"))), 0.0)
    series, last_step = {}, 0

    def put(tag, step, value, wall):
        if _number(value):
            series.setdefault(tag, []).append((step, f32(value), wall))

    for e in events:
        if e.get("rank", 0) != 0 or e.get("type") not in ("step", "eval", "epoch"):
            continue
        wall = e["wall"] if _number(e.get("wall")) else offset + e.get("t", 0)
        if e["type"] == "step":
            last_step = s = e["step"]
            put("loss/train", s, e.get("loss"), wall)
            put("learning_rate", s, e.get("lr"), wall)
            if _number(e.get("samples_per_s")) and e["samples_per_s"] > 0:
                put("throughput/train_samples_per_s", s, e["samples_per_s"], wall)
            if _number(e.get("step_ms")) and e["step_ms"] > 0:
                put("step_time_ms/step", s, e["step_ms"], wall)
            ms = e.get("ms")
            if isinstance(ms, dict):
                for k in ("data", "h2d", "fwd", "bwd", "opt", "comm"):  # a phase left out took 0 ms
                    put("step_time_ms/" + k, s, ms.get(k, 0.0), wall)
                if _number(ms.get("other")):
                    put("step_time_ms/other", s, ms["other"], wall)
            mem = e.get("mem")
            if isinstance(mem, dict):
                for k in ("alloc", "reserved", "peak", "rss", "rss_peak"):
                    if _number(mem.get(k)):
                        put("memory_MiB/" + k, s, mem[k] / MIB, wall)
        elif e["type"] == "eval":
            last_step = s = e["step"]
            put("loss/val", s, e.get("val_loss"), wall)
            put("accuracy/val", s, e.get("val_acc"), wall)
            if _number(e.get("eval_ms")) and e["eval_ms"] > 0:
                put("eval_time_ms", s, e["eval_ms"], wall)
        else:
            put("loss/epoch_train", last_step, e.get("train_loss"), wall)
            rate = e.get("train_samples_per_s") if _number(e.get("train_samples_per_s")) and e["train_samples_per_s"] > 0 \
                else e.get("samples_per_s")
            if _number(rate) and rate > 0:
                put("throughput/epoch_train_samples_per_s", last_step, rate, wall)
            if _number(e.get("seconds")) and e["seconds"] > 0:
                put("epoch_time_s", last_step, e["seconds"], wall)
    return series


def config_leaves(config, prefix=""):
    out = {}
    for k, v in config.items():
        path = prefix + k
        if isinstance(v, dict):
            out.update(config_leaves(v, path + "."))
        elif isinstance(v, (bool, int, float, str)):
            out[path] = v
    return out


def check_run(pb, run_dir, folder, problems):
    files = glob.glob(os.path.join(folder, "events.out.tfevents.*"))
    if len(files) != 1:
        problems.append(f"{folder}: {len(files)} event files, expected 1")
        return {}
    events = []
    for payload in read_records(files[0]):
        e = pb.Event()
        e.ParseFromString(payload)
        events.append(e)
    if events[0].file_version != FILE_VERSION:
        problems.append(f"{files[0]}: first record is not file_version {FILE_VERSION}")

    got, texts, plugins = {}, {}, {}
    for e in events[1:]:
        for v in e.summary.value:
            kind = v.WhichOneof("value")
            if kind == "simple_value":
                got.setdefault(v.tag, []).append((e.step, v.simple_value, e.wall_time))
            elif v.metadata.plugin_data.plugin_name == "text":
                texts[v.tag] = v.tensor.string_val[0].decode("utf-8")
            elif v.metadata.plugin_data.plugin_name == "hparams":
                d = pb.HParamsPluginData()
                d.ParseFromString(v.metadata.plugin_data.content)
                plugins[v.tag] = d

    want = expected_scalars(run_dir)
    for tag in sorted(set(want) | set(got)):
        if want.get(tag) != got.get(tag):
            w, g = want.get(tag, []), got.get(tag, [])
            first = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
            problems.append(f"{folder}: {tag}: {len(g)} points, events.jsonl has {len(w)}; first difference at "
                            f"{first}: {g[first] if first < len(g) else None} vs {w[first] if first < len(w) else None}")

    with open(os.path.join(run_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    shown = texts.get("config", "")
    if json.loads("\n".join(line[4:] for line in shown.split("\n"))) != config:
        problems.append(f"{folder}: the config text is not config.json")
    start = next((e for e in read_events(run_dir) if e.get("type") == "start" and e.get("rank", 0) == 0), {})
    asked = sorted(k for k, s in (start.get("speedups") or {}).items() if isinstance(s, dict) and s.get("requested"))
    speedups = texts.get("speedups", "")
    rows = [r for r in speedups.split("\n") if r.startswith("| ") and not r.startswith("| Speedup")]
    asked_rows = [r for r in rows if r.split("|")[3].strip() == "yes"]
    if len(asked_rows) != len(asked) or (not asked) != speedups.startswith("Speedups asked for: none"):
        problems.append(f"{folder}: the speedups text names {len(asked_rows)} asked for, the start event {asked}")

    info = plugins.get("_hparams_/session_start_info")
    hparams = {}
    if info is None or info.WhichOneof("data") != "session_start_info":
        problems.append(f"{folder}: no hparams session start")
    else:
        for k, v in info.session_start_info.hparams.items():
            hparams[k] = getattr(v, v.WhichOneof("kind"))
        leaves = config_leaves(config)
        values = sorted(json.dumps(v) for v in leaves.values())
        got_values = sorted(json.dumps(v if not isinstance(v, float) or not v.is_integer() else int(v))
                            for k, v in hparams.items() if k != "Speedups")
        want_values = sorted(json.dumps(v if not isinstance(v, float) or not v.is_integer() else int(v))
                             for v in leaves.values())
        if got_values != want_values or "Speedups" not in hparams or len(values) + 1 != len(hparams):
            problems.append(f"{folder}: hparams hold {len(hparams)} values, config.json {len(values)} (+ Speedups)")
        if (hparams.get("Speedups") == "none") != (not asked):
            problems.append(f"{folder}: hparam Speedups is {hparams.get('Speedups')!r}, the start event asked for {asked}")
    summary_path = os.path.join(run_dir, "summary.json")
    if os.path.exists(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            status = json.load(f).get("status")
        end = plugins.get("_hparams_/session_end_info")
        want_status = 1 if status in ("ok", "early-stopped") else 2  # STATUS_SUCCESS, STATUS_FAILURE
        if end is None or end.session_end_info.status != want_status:
            problems.append(f"{folder}: session end status is not {want_status} for a run that ended {status}")
    return {"records": len(events), "scalars": sum(len(v) for v in got.values()), "tags": sorted(got),
            "hparams": hparams, "speedups": speedups.split("\n")[0], "file": files[0]}


def main():
    proto, out_dir, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
    pb = load_messages(proto)
    problems, report = [], {}
    for arg in runs:
        run_dir, name = arg.rsplit("=", 1)
        try:
            report[name] = check_run(pb, run_dir, os.path.join(out_dir, name), problems)
        except ValueError as e:
            problems.append(str(e))
    print(json.dumps(report, indent=1, sort_keys=True))
    for p in problems:
        print("MISMATCH: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
