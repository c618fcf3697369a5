"""The run folder on disk: its checks, its lock and its files, as core/proto's rundir writes them."""
import fcntl
import json
import math
import os

from .errors import RecorderError

CONFIG, EVENTS, SUMMARY, ENV, LOCK = "config.json", "events.jsonl", "summary.json", "env.json", ".lock"


RUN_DIR_ENV = "WB_RUN_DIR"  # wb::launch::kRunDirEnv: set for each run of `workbench-cli ... --command`


def given_run_dir(run_dir):
    """run_dir, else $WB_RUN_DIR; RecorderError when neither names a folder."""
    if run_dir is not None:
        return run_dir
    if os.environ.get(RUN_DIR_ENV):
        return os.environ[RUN_DIR_ENV]
    raise RecorderError(f"run_dir: none given and ${RUN_DIR_ENV} is not set (pass the run's folder, or run the "
                        "script through `workbench-cli try|ladder --command`, which sets it)")


def run_folder(run_dir, overwrite):
    """The absolute run folder, created; RecorderError naming it when it cannot be used."""
    if not isinstance(run_dir, (str, bytes, os.PathLike)) or not os.fspath(run_dir):
        raise RecorderError(f"run_dir: expected a folder path (str or os.PathLike), got {run_dir!r}")
    path = os.path.abspath(os.fsdecode(run_dir))
    if os.path.exists(path) and not os.path.isdir(path):
        raise RecorderError(f"run_dir {path}: is a file, not a folder (choose a folder for the run)")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise RecorderError(f"run_dir {path}: cannot create the folder: {e.strerror} "
                            "(choose a writable folder)") from e
    held = [f for f in (CONFIG, EVENTS, SUMMARY) if os.path.exists(os.path.join(path, f))]
    if held and not overwrite:
        raise RecorderError(f"run_dir {path}: already holds a run ({', '.join(held)}); a finished run is never "
                            "overwritten: choose a new folder, or pass overwrite=True to replace it")
    return path


def take_lock(path):
    """Holds the folder's advisory lock (RunLock: flock on .lock) for the run's life."""
    lock = os.path.join(path, LOCK)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise RecorderError(f"{lock}: cannot open the run folder's lock: {e.strerror} "
                            "(is the run folder writable?)") from e
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RecorderError(f"run folder {path}: another run is using it (it holds {lock}); wait for that run "
                            "to end, or choose another run_dir") from None
    return fd


def clear_old_run(path):
    """overwrite=True: the run it replaces leaves none of its records behind."""
    for name in (EVENTS, SUMMARY, ENV):
        try:
            os.remove(os.path.join(path, name))
        except FileNotFoundError:
            pass


def finite(value):
    """value with every non-finite float as None: JSON has no NaN, and the core writes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def encode_event(event):
    """One line of events.jsonl as encodeEvent writes it: compact, keys sorted, NaN as null."""
    return json.dumps(finite(event), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def write_json_atomic(path, doc):
    """writeJsonAtomic: a temporary file beside it, fsynced, renamed over it (readers see the old
    document or the new one, never half of one)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(finite(doc), f, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise RecorderError(f"{path}: cannot write: {e.strerror}") from e
