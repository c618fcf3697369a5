"""Reads `workbench-cli export --format tensorboard` output with TensorBoard's own reader
(tensorboard.backend.event_processing.event_accumulator) and compares its scalars with each
run's events.jsonl (read_tfevents.expected_scalars), its text with config.json, and checks the
HParams plugin found the run's session.

    python3 tensorboard_reader.py OUT_DIR RUN_DIR=NAME [RUN_DIR=NAME ...]

Exits 1 with the mismatches; 3 when `import tensorboard` fails (the caller skips).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import read_tfevents  # noqa: E402

try:
    from tensorboard.backend.event_processing import event_accumulator
except ImportError as e:
    print(f"no TensorBoard: {e}", file=sys.stderr)
    sys.exit(3)


def main():
    out_dir, runs = sys.argv[1], sys.argv[2:]
    problems, report = [], {}
    for arg in runs:
        run_dir, name = arg.rsplit("=", 1)
        acc = event_accumulator.EventAccumulator(os.path.join(out_dir, name), size_guidance={
            event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
        acc.Reload()
        want = read_tfevents.expected_scalars(run_dir)
        tags = acc.Tags()
        for tag, points in want.items():
            if tag not in tags["scalars"]:
                problems.append(f"{name}: TensorBoard has no scalar {tag}")
                continue
            got = [(s.step, s.value, s.wall_time) for s in acc.Scalars(tag)]
            if got != points:
                problems.append(f"{name}: {tag}: TensorBoard reads {got[:3]}..., events.jsonl {points[:3]}...")
        config_text = acc.Tensors("config")[0].tensor_proto.string_val[0].decode("utf-8")
        with open(os.path.join(run_dir, "config.json"), encoding="utf-8") as f:
            if json.loads("\n".join(line[4:] for line in config_text.split("\n"))) != json.load(f):
                problems.append(f"{name}: the config text is not config.json")
        hparams = acc.PluginTagToContent("hparams")
        if "_hparams_/session_start_info" not in hparams:
            problems.append(f"{name}: the HParams plugin finds no session start")
        report[name] = {"scalar_tags": len(tags["scalars"]), "hparams_tags": sorted(hparams)}
    print(json.dumps(report, indent=1, sort_keys=True))
    for p in problems:
        print("MISMATCH: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
