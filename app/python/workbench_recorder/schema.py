"""The run folder's schema, as the recorder writes it.

core/proto (C++) owns the schema: these lists mirror its field lists (core/proto/src/
event_types.cpp, run_summary.cpp) and tests/app/python/test_recorder_schema.cpp fails when they
differ, comparing them with wb::proto::runFolderSchema(). A record is named by where it sits:
"step.mem" is a step event's mem, "start.speedups.*" each entry of the start event's speedups,
"summary" summary.json (and the end event's summary). Each key maps to the kind of value a
reader takes from it; a value of another kind reads as absent there, so it matters as much as
the name.

`python3 -m workbench_recorder.schema` prints everything here as one JSON document, in the shape
of runFolderSchema().
"""
import json
import sys

EVENT_VERSION = 1  # events.h kEventVersion: bump only with the C++ schema

INT, NUM, BOOL, STR = "integer", "number", "boolean", "string"
JSON, OBJ, MAP, LIST = "json", "object", "map", "list"  # free-form JSON, a record of its own, name -> record, records

STATUSES = ("ok", "failed", "cancelled", "early-stopped", "diverged")

# The speedups in the core's order (wb/common/speedups.h), and the config's speedups section
# with each of them off: what a user's run that names none of them ran with.
SPEEDUP_KEYS = ("workers", "pin_memory", "devices", "precision", "early_stopping", "sharding",
                "inference_eval", "decoded_cache", "channels_last", "fused_optimizer", "grad_accumulation",
                "cudnn_benchmark", "tf32")
SPEEDUPS_OFF = {
    "workers": 0,
    "pin_memory": False,
    "devices": 1,
    "precision": "32-true",
    "early_stopping": {"patience": 0, "monitor": "val_loss", "mode": "min", "min_delta": 0.0,
                       "check_finite": True, "stopping_threshold": 0.0},
    "sharding": "off",
    "inference_eval": False,
    "decoded_cache": "off",
    "channels_last": False,
    "fused_optimizer": False,
    "grad_accumulation": 1,
    "cudnn_benchmark": False,
    "tf32": False,
}

# wb::kContendedOtherCores: other processes' use of the machine, in cores, that marks a run as
# measured under contention (no speedup is taken from it).
CONTENDED_OTHER_CORES = 0.3

MEMORY = {
    "device": STR,
    "alloc": INT,
    "reserved": INT,
    "peak": INT,
    "rss": INT,
    "rss_peak": INT,
    "page_faults_per_step": NUM,
}

RECORDS = {
    "envelope": {  # Envelope
        "v": INT,
        "type": STR,
        "rank": INT,
        "t": NUM,
        "wall": NUM,
    },
    "run": {  # RunEvent
        "run_dir": STR,
        "run_id": STR,
        "name": STR,
        "world_size": INT,
        "config": JSON,
        "resume": STR,
        "config_changes": JSON,
        "fine_tuned_from": STR,
    },
    "start": {  # StartEvent
        "config": JSON,
        "versions": JSON,
        "backend_check": JSON,
        "host": OBJ,
        "device": STR,
        "threads": INT,
        "host_use": OBJ,
        "world_size": INT,
        "local_rank": INT,
        "model": OBJ,
        "dataset": OBJ,
        "steps_per_epoch": INT,
        "total_steps": INT,
        "batch": OBJ,
        "lr_scaling": JSON,
        "resumed_from": OBJ,
        "speedups": MAP,
        "dist": JSON,
    },
    "start.host": {  # HostInfo
        "name": STR,
        "cpu": STR,
        "cores": INT,
    },
    "start.host_use": {  # HostUse
        "memory": STR,
        "threads": STR,
    },
    "start.model": {  # ModelInfo
        "name": STR,
        "parameters": INT,
    },
    "start.dataset": {  # DatasetInfo
        "name": STR,
        "train": INT,
        "val": INT,
        "classes": INT,
        "channels": INT,
        "image_size": INT,
    },
    "start.batch": {  # BatchInfo
        "per_rank": INT,
        "global": INT,
        "note": STR,
    },
    "start.resumed_from": {  # ResumedFrom
        "path": STR,
        "epoch": INT,
        "batch_in_epoch": INT,
        "step": INT,
    },
    "start.speedups.*": {  # SpeedupStatus
        "requested": BOOL,
        "active": BOOL,
        "note": STR,
        "optimizer_state_bytes": INT,
        "gradient_memory_saved": BOOL,
    },
    "step": {  # StepEvent
        "epoch": INT,
        "step": INT,
        "samples": INT,
        "loss": NUM,
        "lr": NUM,
        "samples_per_s": NUM,
        "step_ms": NUM,
        "ms": OBJ,
        "mem": OBJ,
        "cpu": OBJ,
        "comm": OBJ,
        "amp": OBJ,
        "flops": OBJ,
        "progress": NUM,
        "eta_s": NUM,
    },
    "step.ms": {  # StepPhases
        "data": NUM,
        "h2d": NUM,
        "fwd": NUM,
        "bwd": NUM,
        "comm": NUM,
        "opt": NUM,
        "other": NUM,
    },
    "step.mem": MEMORY,
    "step.cpu": {  # CpuPart
        "process_cores": NUM,
        "machine_busy_cores": NUM,
        "other_cores": NUM,
        "cores": INT,
        "threads": INT,
    },
    "step.comm": {  # CommPart
        "comm_ms": NUM,
        "launch_ms": NUM,
        "wait_ms": NUM,
        "gather_ms": NUM,
        "overlap": NUM,
        "bytes_reduced": INT,
        "bytes_gathered": INT,
        "buckets": INT,
        "buckets_in_backward": INT,
        "optimizer_state_bytes": INT,
    },
    "step.amp": {  # AmpPart
        "scale": NUM,
        "skipped": INT,
    },
    "eval": {  # EvalEvent
        "epoch": INT,
        "step": INT,
        "samples": INT,
        "val_loss": NUM,
        "val_acc": NUM,
        "eval_ms": NUM,
        "eval_samples": INT,
        "inference_mode": BOOL,
        "mem": OBJ,
    },
    "eval.mem": MEMORY,
    "epoch": {  # EpochEvent
        "epoch": INT,
        "seconds": NUM,
        "train_seconds": NUM,
        "samples": INT,
        "train_samples_per_s": NUM,
        "samples_per_s": NUM,
        "train_loss": NUM,
        "complete": BOOL,
    },
    "early_stop": {  # EarlyStopEvent
        "reason": STR,
        "best_epoch": INT,
        "best_value": NUM,
        "monitor": STR,
        "epochs_saved": INT,
    },
    "checkpoint": {  # CheckpointEvent
        "kind": STR,
        "path": STR,
        "epoch": INT,
        "batch_in_epoch": INT,
        "step": INT,
    },
    "warning": {  # WarningEvent
        "message": STR,
        "path": STR,
    },
    "error": {  # ErrorEvent
        "message": STR,
        "code": STR,
        "log_tail": STR,
    },
    "end": {  # EndEvent
        "status": STR,
        "summary": OBJ,
    },
    "summary": {  # RunSummary
        "status": STR,
        "run_id": STR,
        "name": STR,
        "run_dir": STR,
        "error": STR,
        "message": STR,
        "failed_rank": INT,
        "log_tail": STR,
        "training_status": STR,
        "events_lost": INT,
        "events_late": INT,
        "events_error": STR,
        "failed_rank_stalled": BOOL,
        "fine_tuned_from": STR,
        "device": STR,
        "world_size": INT,
        "epochs": INT,
        "steps": INT,
        "optimizer_steps": INT,
        "samples": INT,
        "wall_s": NUM,
        "train_samples": INT,
        "train_s": NUM,
        "train_samples_per_s": NUM,
        "eval_s": NUM,
        "checkpoint_s": NUM,
        "time_to_first_step_s": NUM,
        "first_step_unix": NUM,
        "run_wall_s": NUM,
        "launcher_wall_s": NUM,
        "cpu": OBJ,
        "host_speed": OBJ,
        "best_val_acc": NUM,
        "final_val_acc": NUM,
        "best_val_loss": NUM,
        "peak_mem": INT,
        "amp_skipped": INT,
        "best_epoch": INT,
        "best_value": NUM,
        "best_weights_restored": BOOL,
        "best_weights_note": STR,
        "target_val_acc": NUM,
        "samples_to_target": INT,
        "steps_to_target": INT,
        "checkpoints_late": JSON,
        "flops": OBJ,
    },
    "summary.cpu": {  # RunCpu
        "cores": INT,
        "asked_cores": INT,
        "used_cores": NUM,
        "other_load_cores": NUM,
        "contended": BOOL,
        "shared_cores": NUM,
        "shared": BOOL,
        "oversubscribed": BOOL,
        "note": STR,
        "busiest_others": LIST,
        "threads": INT,
        "min_threads": INT,
        "process_cores": NUM,
        "machine_busy_cores": NUM,
        "other_cores": NUM,
    },
    "summary.host_speed": {  # HostSpeedCheck
        "before_ms": NUM,
        "after_ms": NUM,
        "kernel": STR,
    },
}

class SchemaError(ValueError):
    """A record the recorder was about to write names a field the schema does not have."""


def check_fields(record, values):
    """Raises SchemaError naming the first key of `values` that `record`'s list lacks.

    The recorder runs this on what it writes, so a misspelt field fails where it is written
    instead of reading as absent in every reader.
    """
    known = RECORDS[record]
    for key in values:
        if key not in known:
            raise SchemaError(f"{record}: the schema has no field {key!r} (fields: {', '.join(known)})")


def as_json():
    """Everything here in the shape of wb::proto::runFolderSchema()."""
    return {
        "version": EVENT_VERSION,
        "records": RECORDS,
        "statuses": list(STATUSES),
        "speedup_keys": list(SPEEDUP_KEYS),
        "speedups_off": SPEEDUPS_OFF,
        "contended_other_cores": CONTENDED_OTHER_CORES,
    }


if __name__ == "__main__":
    json.dump(as_json(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
