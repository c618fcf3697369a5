"""A Lightning callback that records any Trainer.fit as a workbench run, with no change to the
user's LightningModule:

    from workbench_recorder.lightning import WorkbenchCallback
    trainer = Trainer(max_epochs=5, callbacks=[WorkbenchCallback("runs/my-run")])
    trainer.fit(model, datamodule)

It records steps, the wait for each batch (the gap between one batch's end and the next one's
start: loading, and Lightning's copy to the device), forward / backward / optimizer time from the
hooks between them, validation metrics, early stopping, and the Trainer's own precision, devices,
strategy, accumulation and the DataLoader's num_workers / pin_memory as the run's speedups. Rank 0
writes; the other ranks only count. Lightning (`lightning` or `pytorch_lightning`) is imported
when a callback is made, never by `import workbench_recorder`.
"""
import time

from .recorder import Recorder

_LOSS_KEYS = ("val_loss", "val/loss", "validation_loss", "valid_loss", "val_loss_epoch")
_ACC_KEYS = ("val_acc", "val/acc", "val_accuracy", "val/accuracy", "valid_acc", "val_acc_epoch")
_PRECISIONS = {"32": "32-true", "16": "16-mixed", "bf16": "bf16-mixed", "64": "64-true"}
_classes = {}


def lightning_callback_base():
    """Lightning's Callback class (lightning 2.x, else pytorch_lightning); ImportError saying how
    to install it when neither is there."""
    try:
        from lightning.pytorch import Callback
        return Callback
    except ImportError:
        pass
    try:
        from pytorch_lightning import Callback
        return Callback
    except ImportError as e:
        raise ImportError("workbench_recorder.lightning needs Lightning: `pip install lightning` "
                          "(or pytorch-lightning); Debian 12 does not package it") from e


def WorkbenchCallback(run_dir=None, config=None, *, log_every=50, overwrite=False):  # noqa: N802 (a class to the user)
    """A Lightning Callback recording Trainer.fit into run_dir. config: your own settings for
    config.json (the Trainer's settings are added; for the speedups the Trainer's win). run_dir=None:
    $WB_RUN_DIR, the folder `workbench-cli try|ladder --command` gives each run."""
    base = lightning_callback_base()
    if base not in _classes:
        _classes[base] = type("WorkbenchCallback", (RecorderHooks, base), {"__doc__": WorkbenchCallback.__doc__})
    return _classes[base](run_dir, config, log_every=log_every, overwrite=overwrite)


class RecorderHooks:
    """The callback's hooks, Lightning-free (tests drive them with a stand-in Trainer)."""

    def __init__(self, run_dir=None, config=None, *, log_every=50, overwrite=False):
        super().__init__()
        self.run_dir, self.user_config = run_dir, dict(config or {})
        self.log_every, self.overwrite = log_every, overwrite
        self.recorder = None
        self._mark = None  # the end of the last batch (or the epoch's start): the next one waits from here
        self._monitored = []  # (epoch, value) of early stopping's monitor, for its best epoch
        self._val_began = None

    # ---- the run's life ------------------------------------------------------------------

    def on_train_start(self, trainer, pl_module, *args):
        if getattr(trainer, "global_rank", 0) != 0 or self.recorder is not None:
            return
        loader = _train_loader(trainer)
        config = trainer_config(trainer, pl_module, loader, self.user_config, self.log_every)
        self.recorder = Recorder(self.run_dir, config, log_every=self.log_every, rank=0,
                                 world_size=getattr(trainer, "world_size", 1) or 1, overwrite=self.overwrite)
        batch = getattr(loader, "batch_size", None)
        steps = _batches_per_epoch(trainer)
        self.recorder.start(model=pl_module, batch_size=batch, steps_per_epoch=steps,
                            total_steps=_total_steps(trainer, steps), device=_device(trainer),
                            speedups=speedup_statuses(config["speedups"], trainer), dataset=_dataset_info(loader))

    def on_fit_end(self, trainer, pl_module, *args):
        if self.recorder is None:
            return
        stopper = _early_stopping(trainer)
        if stopper is not None and getattr(stopper, "stopped_epoch", 0) > 0:
            self._record_early_stop(trainer, stopper)
        self.recorder.end()

    def on_exception(self, trainer, pl_module, exception, *args):
        if self.recorder is None:
            return
        if isinstance(exception, KeyboardInterrupt):
            self.recorder.end("cancelled", message="interrupted (KeyboardInterrupt)")
        else:
            self.recorder.end("failed", error=f"{type(exception).__name__}: {exception}")

    # ---- steps ---------------------------------------------------------------------------

    def on_train_epoch_start(self, trainer, pl_module, *args):
        self._mark = time.perf_counter()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx, *args):
        if self.recorder is None:
            return
        now = time.perf_counter()
        self.recorder.begin_step(self._mark if self._mark is not None else now)
        self.recorder.data_ready()
        self._phase_mark = now

    def on_before_backward(self, trainer, pl_module, loss, *args):
        self._phase("fwd")

    def on_after_backward(self, trainer, pl_module, *args):
        self._phase("bwd")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, *args):
        if self.recorder is None:
            return
        self._phase("opt")  # the optimizer step, zero_grad and Lightning's own bookkeeping
        accumulate = max(1, int(getattr(trainer, "accumulate_grad_batches", 1) or 1))
        self.recorder.step(_loss(outputs), batch_size=_batch_size(batch), lr=_lr(trainer),
                           optimizer_step=(batch_idx + 1) % accumulate == 0)
        self._mark = time.perf_counter()

    def _phase(self, name):
        if self.recorder is None or getattr(self, "_phase_mark", None) is None:
            return
        now = time.perf_counter()
        self.recorder.add_phase(name, now - self._phase_mark)
        self._phase_mark = now

    # ---- validation and epochs -------------------------------------------------------------

    def on_validation_start(self, trainer, pl_module, *args):
        self._val_began = time.perf_counter()

    def on_validation_end(self, trainer, pl_module, *args):
        if self.recorder is None or getattr(trainer, "sanity_checking", False) or self._val_began is None:
            return
        metrics = getattr(trainer, "callback_metrics", {}) or {}
        loss, acc = _metric(metrics, _LOSS_KEYS), _metric(metrics, _ACC_KEYS)
        if acc is not None and 1.0 < acc <= 100.0:
            acc /= 100.0  # a percentage: the run folder holds fractions
        stopper = _early_stopping(trainer)
        if stopper is not None:
            self._monitored.append((self.recorder.epoch, _metric(metrics, (stopper.monitor,))))
        self.recorder.eval(val_loss=loss, val_acc=acc, samples=_val_samples(trainer),
                           seconds=time.perf_counter() - self._val_began, inference_mode=_inference_mode(trainer))
        self._val_began = None

    def on_train_epoch_end(self, trainer, pl_module, *args):
        if self.recorder is not None:
            self.recorder.epoch_end()

    def _record_early_stop(self, trainer, stopper):
        mode = getattr(stopper, "mode", "min")
        seen = [(e, v) for e, v in self._monitored if v is not None]
        pick = min if mode == "min" else max
        best_epoch, best = pick(seen, key=lambda ev: ev[1]) if seen else (0, None)
        max_epochs = getattr(trainer, "max_epochs", None) or 0
        ran = getattr(trainer, "current_epoch", 0) + 1
        self.recorder.early_stop(reason=f"{stopper.monitor} did not improve for {stopper.patience} evaluations",
                                 best_epoch=best_epoch, best_value=best, monitor=stopper.monitor,
                                 epochs_saved=max(0, max_epochs - ran) if max_epochs > 0 else 0)


# ---- the Trainer's settings as the run's config ------------------------------------------


def trainer_config(trainer, module, loader, user, log_every):
    """config.json: the user's settings, then what the Trainer and its DataLoader ran with."""
    config = dict(user)
    config.setdefault("name", type(module).__name__)
    config.setdefault("model", {"name": type(module).__name__})
    train = dict(config.get("train") or {})
    train.update(epochs=getattr(trainer, "max_epochs", None), max_steps=getattr(trainer, "max_steps", -1),
                 batch_size=getattr(loader, "batch_size", None), log_every=log_every,
                 accumulate_grad_batches=getattr(trainer, "accumulate_grad_batches", 1))
    config["train"] = train
    speedups = dict(config.get("speedups") or {})
    speedups.update(trainer_speedups(trainer, loader))
    config["speedups"] = speedups
    config["lightning"] = {"strategy": type(getattr(trainer, "strategy", None)).__name__,
                           "precision": str(getattr(trainer, "precision", "32-true")),
                           "num_nodes": getattr(trainer, "num_nodes", 1)}
    return config


def trainer_speedups(trainer, loader):
    """The speedups section from the Trainer: precision, devices, early stopping, loader workers
    and pin memory, sharding (DeepSpeed ZeRO stage 1 / 2), inference-mode eval."""
    out = {"precision": _precision(trainer),
           "devices": int(getattr(trainer, "world_size", 1) or 1),
           "workers": int(getattr(loader, "num_workers", 0) or 0),
           "pin_memory": bool(getattr(loader, "pin_memory", False)),
           "inference_eval": _inference_mode(trainer),
           "sharding": _sharding(trainer)}
    stopper = _early_stopping(trainer)
    if stopper is not None:
        out["early_stopping"] = {"patience": int(stopper.patience), "monitor": str(stopper.monitor),
                                 "mode": str(getattr(stopper, "mode", "min")),
                                 "min_delta": abs(float(getattr(stopper, "min_delta", 0.0))),
                                 "check_finite": bool(getattr(stopper, "check_finite", True)),
                                 "stopping_threshold": float(getattr(stopper, "stopping_threshold", None) or 0.0)}
    return out


def speedup_statuses(speedups, trainer):
    """start.speedups in the Trainer's words."""
    from ._config import speedup_statuses as from_config
    out = from_config(speedups)
    strategy = type(getattr(trainer, "strategy", None)).__name__
    out["devices"]["note"] = f"{speedups['devices']} device(s), {strategy}"
    out["precision"]["note"] = f"Trainer(precision={getattr(trainer, 'precision', '32-true')!r})"
    accumulate = getattr(trainer, "accumulate_grad_batches", 1)
    if accumulate and accumulate > 1:
        out["devices"]["note"] += f", gradients accumulated over {accumulate} batches"
    return out


def _precision(trainer):
    value = str(getattr(trainer, "precision", "32-true"))
    return _PRECISIONS.get(value, value)


def _sharding(trainer):
    """DeepSpeed's ZeRO stage 1 / 2 are the core's zero1 / zero2; anything else is off here (the
    strategy itself is in config.json's lightning.strategy)."""
    strategy = getattr(trainer, "strategy", None)
    if not type(strategy).__name__.startswith("DeepSpeed"):
        return "off"
    stage = (getattr(strategy, "config", None) or {}).get("zero_optimization", {}).get("stage")
    return {1: "zero1", 2: "zero2"}.get(stage, "off")


def _inference_mode(trainer):
    value = getattr(trainer, "inference_mode", None)
    if not isinstance(value, bool):
        value = getattr(trainer, "_inference_mode", True)
    return bool(value)


def _early_stopping(trainer):
    for cb in getattr(trainer, "callbacks", []) or []:
        if type(cb).__name__ == "EarlyStopping":
            return cb
    return None


def _train_loader(trainer):
    """The training DataLoader (the first of a CombinedLoader's)."""
    loader = getattr(trainer, "train_dataloader", None)
    for _ in range(3):
        if loader is None or hasattr(loader, "num_workers"):
            return loader
        inner = getattr(loader, "iterables", None) or getattr(loader, "loaders", None)
        if isinstance(inner, dict):
            inner = next(iter(inner.values()), None)
        elif isinstance(inner, (list, tuple)):
            inner = inner[0] if inner else None
        loader = inner
    return loader


def _batches_per_epoch(trainer):
    n = getattr(trainer, "num_training_batches", 0)
    return int(n) if isinstance(n, (int, float)) and n != float("inf") else 0


def _total_steps(trainer, per_epoch):
    max_steps = getattr(trainer, "max_steps", -1) or -1
    epochs = getattr(trainer, "max_epochs", None) or 0
    total = per_epoch * epochs if per_epoch and epochs > 0 else 0
    return min(total, max_steps) if max_steps > 0 and total else (max_steps if max_steps > 0 else total)


def _device(trainer):
    root = getattr(getattr(trainer, "strategy", None), "root_device", None)
    return str(root) if root is not None else None


def _dataset_info(loader):
    dataset = getattr(loader, "dataset", None)
    try:
        return {"name": type(dataset).__name__, "train": len(dataset)} if dataset is not None else {}
    except TypeError:  # an iterable dataset has no length
        return {"name": type(dataset).__name__}


def _val_samples(trainer):
    loaders = getattr(trainer, "val_dataloaders", None)
    loaders = loaders if isinstance(loaders, (list, tuple)) else [loaders] if loaders is not None else []
    total = 0
    for loader in loaders:
        try:
            total += len(loader.dataset)
        except (AttributeError, TypeError):
            pass
    return total


def _metric(metrics, keys):
    for key in keys:
        if key in metrics and metrics[key] is not None:
            value = metrics[key]
            return float(value.item() if hasattr(value, "item") else value)
    return None


def _loss(outputs):
    if isinstance(outputs, dict):
        outputs = outputs.get("loss")
    return outputs if outputs is not None and (hasattr(outputs, "detach") or isinstance(outputs, float)) else None


def _batch_size(batch):
    """This rank's samples in a batch: the leading size of its first tensor."""
    while isinstance(batch, (list, tuple, dict)) and batch:
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape else None


def _lr(trainer):
    try:
        return trainer.optimizers[0].param_groups[0]["lr"]
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
