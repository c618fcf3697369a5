"""config.json from the user's config: plain JSON, named, with the speedups section filled in."""
import copy
import math
import os
from collections.abc import Mapping

from .errors import RecorderError
from .schema import SPEEDUPS_OFF


def _path(parts):
    return "config" + "".join(f"[{p!r}]" for p in parts)


def plain_json(value, parts=()):
    """A copy of value made of dict / list / str / int / float / bool / None only; RecorderError
    naming the first field that is not (a tensor, a NaN, a key that is not a string)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecorderError(f"{_path(parts)}: {value} is not a JSON number (give a finite number or None)")
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecorderError(f"{_path(parts)}: key {key!r} is not a string (JSON object keys are strings)")
            out[key] = plain_json(item, parts + (key,))
        return out
    if isinstance(value, (list, tuple)):
        return [plain_json(item, parts + (i,)) for i, item in enumerate(value)]
    raise RecorderError(f"{_path(parts)}: a {type(value).__name__} is not JSON-serialisable "
                        "(give a number, string, bool, None, list or dict: e.g. float(x) or str(x))")


def _fill(section, defaults, parts):
    for key, default in defaults.items():
        if key not in section:
            section[key] = copy.deepcopy(default)
        elif isinstance(default, dict):
            if not isinstance(section[key], dict):
                raise RecorderError(f"{_path(parts + (key,))}: must be an object like {default}")
            _fill(section[key], default, parts + (key,))


def resolve_config(config, run_dir):
    """config.json's document: the user's fields as given, plus name (the folder's) and every
    speedup the section does not name, off (a reader compares speedups across runs by these)."""
    config = {} if config is None else config
    if not isinstance(config, Mapping):
        raise RecorderError(f"config: expected a dict of the run's settings, got a {type(config).__name__}")
    doc = plain_json(config)
    doc.setdefault("name", os.path.basename(run_dir))
    if not isinstance(doc["name"], str):
        raise RecorderError(f"config['name']: must be a string, got {doc['name']!r}")
    speedups = doc.setdefault("speedups", {})
    if not isinstance(speedups, dict):
        raise RecorderError("config['speedups']: must be an object of speedup settings "
                            f"({', '.join(SPEEDUPS_OFF)})")
    _fill(speedups, SPEEDUPS_OFF, ("speedups",))
    return doc


def speedup_statuses(speedups):
    """start.speedups: each speedup, requested when its setting differs from off, in words."""
    out = {}
    for key, off in SPEEDUPS_OFF.items():
        value = speedups.get(key, off)
        if key == "early_stopping":
            patience = value.get("patience") if isinstance(value, dict) else None
            on = isinstance(patience, (int, float)) and patience > 0
            note = f"monitor {value.get('monitor')}, patience {patience}" if on else "off"
        else:
            on, note = value != off, f"{value}"
        # The recorder cannot see inside the user's loop: what the config asks for is what ran.
        out[key] = {"requested": bool(on), "active": bool(on), "note": note if on else "off"}
    return out
