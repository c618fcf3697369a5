"""Recorder: a run folder from your own training loop, read like any run of the workbench."""
import atexit
import contextlib
import math
import os
import sys
import time
import weakref

from . import _folder, _system, schema
from ._config import resolve_config, speedup_statuses
from .errors import RecorderError

_PHASES = ("h2d", "fwd", "bwd", "comm", "opt")  # step.ms phases a caller may time (data: batches())
_DEFAULT_LOG_EVERY = 50


class _Interval:
    """What the steps since the last step event add up to."""

    def __init__(self):
        self.steps = self.samples = 0
        self.seconds = self.data = 0.0
        self.phases = dict.fromkeys(_PHASES, 0.0)
        self.timed = set()  # the phases some step of the interval timed
        self.loss_sum, self.loss_n = None, 0  # a tensor stays on its device until the log interval
        self.faults = _system.minor_faults()


class _Epoch:
    def __init__(self, index, now):
        self.index, self.began = index, now
        self.steps = self.samples = 0
        self.train_seconds = 0.0
        self.loss_total, self.loss_n = 0.0, 0


class Recorder:
    """Writes one run folder (config.json, events.jsonl, summary.json, env.json and its lock)
    with the same records, field names and meanings as the workbench's own runs, so
    `workbench-cli compare | export | whatif` and the window read it like any other run.

    run_dir=None takes $WB_RUN_DIR: the folder `workbench-cli try|ladder --command` gives each run.

    Thread affinity: one thread (the training loop's). Only rank 0 writes: on another rank
    (rank=, else $RANK) every method does nothing. Errors: RecorderError naming the argument,
    field or file, raised by the constructor; once the run is under way a write the disk refuses
    is counted and reported in summary.json (the run ends failed), never raised into training.

        with Recorder("runs/my-run", {"name": "resnet", "speedups": {"workers": 4}}) as rec:
            for epoch in range(epochs):
                for x, y in rec.batches(loader):      # times the wait for each batch
                    ...                               # forward, backward, optimizer step
                    rec.step(loss=loss, batch_size=len(x), lr=lr)
                with rec.evaluating():
                    val_loss, val_acc = evaluate(model)
                rec.eval(val_loss=val_loss, val_acc=val_acc, samples=len(val_set))
                rec.epoch_end()
    """

    def __init__(self, run_dir=None, config=None, *, log_every=None, rank=None, world_size=None, device=None,
                 overwrite=False):
        self._t0 = time.perf_counter()
        run_dir = _folder.given_run_dir(run_dir)
        self.rank = int(os.environ.get("RANK", 0)) if rank is None else int(rank)
        self.world_size = max(1, int(os.environ.get("WORLD_SIZE", 1)) if world_size is None else int(world_size))
        self.writes = self.rank == 0
        self.run_dir, self.config, self.status = None, None, None
        if not self.writes:
            return
        self.run_dir = _folder.run_folder(run_dir, overwrite)
        self.config = resolve_config(config, self.run_dir)  # before anything is written
        self._lock_fd = _folder.take_lock(self.run_dir)
        if overwrite:
            _folder.clear_old_run(self.run_dir)
        self._init_state(log_every, device)
        _folder.write_json_atomic(os.path.join(self.run_dir, _folder.CONFIG), self.config)
        self._events = open(os.path.join(self.run_dir, _folder.EVENTS), "a", encoding="utf-8")
        self._emit("run", -1, run_dir=self.run_dir, run_id=self.run_id, name=self.config["name"],
                   world_size=self.world_size, config=self.config)
        atexit.register(_end_at_exit, weakref.ref(self))

    def _init_state(self, log_every, device):
        train = self.config.get("train") if isinstance(self.config.get("train"), dict) else {}
        every = log_every if log_every is not None else train.get("log_every", _DEFAULT_LOG_EVERY)
        self.log_every = int(every) if isinstance(every, (int, float)) and every >= 1 else _DEFAULT_LOG_EVERY
        self.run_id = os.path.basename(self.run_dir)
        self._device = device
        self._cpu_start = _system.cpu_times()
        self._cores = os.cpu_count() or 0
        self._cpu_interval = self._cpu_start
        self._started = False
        self._start_time = None  # when training began (start()): wall_s counts from here
        self._steps = self._samples = self._optimizer_steps = 0
        self._train_s = self._eval_s = 0.0
        self._total_steps = 0
        self._batch_size = None
        self._interval = _Interval()
        self._epoch = None
        self._epochs_done = 0
        self._step_began = self._data_ready = None
        self._pending_data = 0.0
        self._pending = {}
        self._last_mark = None  # when the last step (or evaluation) ended: an untimed step starts here
        self._evals = []
        self._eval_timer = None
        self._early_stop = None
        self._first_step = None
        self._lr = None
        self._peak_mem = 0
        self._lost, self._write_error = 0, ""

    # ---- the run's life ------------------------------------------------------------------

    def start(self, *, model=None, dataset=None, steps_per_epoch=0, total_steps=0, batch_size=None,
              device=None, speedups=None, host_use=None):
        """The start event: what trains where. Called by the first step when you do not.

        model: a torch module (its class name and parameters are counted) or {"name", "parameters"};
        dataset: {"name", "train", "val", "classes", "channels", "image_size"} (any of them);
        speedups: {key: {"requested", "active", "note"}} when you know better than the config.
        """
        if not self.writes or self._started:
            return
        self._started = True
        self._device = _system.cuda_device(device or self._device)
        self._total_steps = int(total_steps or 0)
        self._batch_size = batch_size
        self._start_time = self._last_mark = time.perf_counter()
        self._epoch = _Epoch(1, self._start_time)
        host = _system.host_info()
        fields = {"config": self.config, "versions": _system.versions(), "host": host, "device": self._device,
                  "threads": _system.threads(), "world_size": self.world_size, "local_rank": 0,
                  "model": _model_info(model), "dataset": dict(dataset or {}),
                  "steps_per_epoch": int(steps_per_epoch or 0), "total_steps": self._total_steps,
                  "speedups": speedups or speedup_statuses(self.config["speedups"])}
        if batch_size:
            fields["batch"] = {"per_rank": int(batch_size), "global": int(batch_size) * self.world_size,
                               "note": "batch_size is per rank; the global batch is batch_size x world_size"}
        if host_use:
            fields["host_use"] = dict(host_use)
        self._emit("start", 0, **fields)
        env = {"device": self._device, "host": host, "run_id": self.run_id, "threads": fields["threads"],
               "versions": fields["versions"], "world_size": self.world_size}
        self._try(lambda: _folder.write_json_atomic(os.path.join(self.run_dir, _folder.ENV), env))

    def end(self, status=None, *, error=None, message=None):
        """Writes summary.json (atomically) and the end event, and lets go of the folder.

        status: ok | failed | cancelled | early-stopped | diverged; default early-stopped after
        early_stop(), else ok. error: why it failed, in words. Later calls do nothing.
        """
        if not self.writes or self.status is not None:
            return
        status = status or ("early-stopped" if self._early_stop else "ok")
        if status not in schema.STATUSES:
            raise RecorderError(f"status: {status!r} is not one of {', '.join(schema.STATUSES)}")
        self.status = status
        if error:
            self._emit("error", 0, message=str(error), code="training_failed")
        self._flush_steps()
        summary = self._summary(status, error, message)
        if self._lost:  # the folder lost records: its figures cannot be read back whole
            summary.update(status="failed", training_status=status, events_lost=self._lost,
                           events_error=self._write_error)
        self._try(lambda: _folder.write_json_atomic(os.path.join(self.run_dir, _folder.SUMMARY), summary))
        self._emit("end", -1, status=summary["status"], summary=summary)
        self._close()

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:
            self.end()
        elif issubclass(kind, KeyboardInterrupt):
            self.end("cancelled", message="interrupted (KeyboardInterrupt)")
        else:
            self.end("failed", error=f"{kind.__name__}: {exc}")
        return False

    # ---- training steps ------------------------------------------------------------------

    def batches(self, iterable):
        """Yields iterable's batches, timing how long each one kept the step waiting (ms.data)."""
        iterator = iter(iterable)
        while True:
            self.begin_step()
            try:
                batch = next(iterator)
            except StopIteration:
                self._step_began = None
                return
            self.data_ready()
            yield batch

    def begin_step(self, at=None):
        """A step begins: from here the loop waits for its batch (at: a time.perf_counter())."""
        if self.writes:
            self._step_began = time.perf_counter() if at is None else at
            self._pending_data = 0.0

    def data_ready(self):
        """The step's batch has arrived: the wait since begin_step() is its data time."""
        if self.writes and self._step_began is not None:
            self._pending_data = time.perf_counter() - self._step_began

    @contextlib.contextmanager
    def phase(self, name):
        """Times a part of the current step (h2d, fwd, bwd, comm, opt) for ms. On CUDA the host's
        clock sees kernel launches, not kernels: synchronise inside it if you want the device time."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add_phase(name, time.perf_counter() - began)

    def add_phase(self, name, seconds):
        """Adds seconds you timed yourself to the current step's phase `name`."""
        if name not in _PHASES:
            raise RecorderError(f"phase: {name!r} is not one of {', '.join(_PHASES)} (the data wait is batches()')")
        if self.writes:
            self._pending[name] = self._pending.get(name, 0.0) + seconds

    def step(self, loss=None, *, batch_size=None, lr=None, optimizer_step=True):
        """One training step has ended. loss: a float or a tensor (kept on its device until the log
        interval, so no step waits for the GPU); batch_size: this rank's samples (default start()'s).
        Throughput counts these steps' time only: evaluation and anything between epochs is left out."""
        if not self.writes:
            return
        now = time.perf_counter()
        if not self._started:
            self.start()
        began = self._step_began if self._step_began is not None else self._last_mark
        seconds = max(0.0, now - began)
        samples = int(batch_size or self._batch_size or 0) * self.world_size
        self._count_step(seconds, samples, optimizer_step)
        self._count_phases(seconds)
        self._count_loss(loss)
        self._lr = lr
        self._step_began, self._last_mark = None, now
        if self._first_step is None:
            self._first_step = (_system.process_age_seconds(), time.time())
        if self._interval.steps >= self.log_every:
            self._flush_steps()

    def _count_step(self, seconds, samples, optimizer_step):
        self._steps += 1
        self._optimizer_steps += 1 if optimizer_step else 0
        self._samples += samples
        self._train_s += seconds
        iv, ep = self._interval, self._epoch
        iv.steps, iv.samples, iv.seconds = iv.steps + 1, iv.samples + samples, iv.seconds + seconds
        ep.steps, ep.samples, ep.train_seconds = ep.steps + 1, ep.samples + samples, ep.train_seconds + seconds

    def _count_phases(self, seconds):
        iv = self._interval
        if self._step_began is not None:
            iv.data += self._pending_data
            iv.timed.add("data")
        for name, value in self._pending.items():
            iv.phases[name] += value
            iv.timed.add(name)
        self._pending, self._pending_data = {}, 0.0

    def _count_loss(self, loss):
        if loss is None:
            return
        iv = self._interval
        value = loss.detach() if hasattr(loss, "detach") else float(loss)
        iv.loss_sum = value if iv.loss_sum is None else iv.loss_sum + value
        iv.loss_n += 1

    def _flush_steps(self):
        """The step event of the steps since the last one (the core's log interval)."""
        iv = self._interval
        if iv.steps == 0:
            return
        self._interval = _Interval()
        loss = float(iv.loss_sum) / iv.loss_n if iv.loss_n else math.nan  # the one sync per interval
        if iv.loss_n and math.isfinite(loss):
            self._epoch.loss_total += loss * iv.loss_n
            self._epoch.loss_n += iv.loss_n
        self._emit("step", 0, **self._step_fields(iv, loss))

    def _step_fields(self, iv, loss):
        ms_per = 1000.0 / iv.steps
        fields = {"epoch": self._epoch.index, "step": self._steps, "samples": self._samples, "loss": loss,
                  "lr": _number(self._lr),
                  "samples_per_s": iv.samples / iv.seconds if iv.seconds > 0 else 0.0,
                  "step_ms": iv.seconds * ms_per, "mem": self._memory(iv), "cpu": self._cpu_interval_part()}
        if iv.timed:
            ms = {"data": iv.data * ms_per}
            ms.update({name: iv.phases[name] * ms_per for name in _PHASES if name in iv.timed})
            # The phases add up to the step, as the core's do: what no phase covered is other.
            ms["other"] = max(0.0, fields["step_ms"] - sum(ms.values()))
            fields["ms"] = ms
        if self._total_steps > 0:
            fields["progress"] = min(1.0, self._steps / self._total_steps)
            fields["eta_s"] = max(0, self._total_steps - self._steps) * iv.seconds / iv.steps
        return fields

    def _memory(self, iv=None):
        faults = (_system.minor_faults() - iv.faults) / iv.steps if iv else None
        mem = _system.memory(self._device or "cpu", faults)
        self._peak_mem = max(self._peak_mem, mem["peak"] if self._device.startswith("cuda") else mem["rss_peak"])
        return mem

    def _cpu_interval_part(self):
        now = _system.cpu_times()
        process, other, _ = _system.cpu_share(self._cpu_interval, now)
        self._cpu_interval = now
        return {"process_cores": process, "machine_busy_cores": process + other, "other_cores": other,
                "cores": self._cores, "threads": _system.threads()}

    # ---- evaluation and epochs -------------------------------------------------------------

    @property
    def epoch(self):
        """The epoch under way, 1-based (0 before start())."""
        return self._epoch.index if self.writes and self._epoch else 0

    @contextlib.contextmanager
    def evaluating(self):
        """Times an evaluation for the next eval() (its eval_ms, and the summary's eval_s)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self._eval_timer = time.perf_counter() - began

    def eval(self, *, val_loss=None, val_acc=None, samples=0, seconds=None, inference_mode=None):
        """An evaluation's result: val_acc 0..1 (a percentage is refused), val_loss, the samples it
        scored. Its time: seconds, else evaluating()'s, else the time since the last step ended."""
        if not self.writes:
            return
        if not self._started:
            self.start()
        acc = _number(val_acc)
        if acc is not None and not 0.0 <= acc <= 1.0:
            raise RecorderError(f"val_acc: {acc} is not a fraction 0..1 (give 0.87, not 87)")
        if seconds is None:
            seconds = self._eval_timer if self._eval_timer is not None else time.perf_counter() - self._last_mark
        self._eval_timer = None
        self._eval_s += seconds
        self._flush_steps()
        loss = _number(val_loss)
        self._evals.append((self._epoch.index, loss, acc))
        if inference_mode is None:
            inference_mode = bool(self.config["speedups"].get("inference_eval", False))
        self._emit("eval", 0, epoch=self._epoch.index, step=self._steps, samples=self._samples, val_loss=loss,
                   val_acc=acc, eval_ms=seconds * 1000.0, eval_samples=int(samples or 0),
                   inference_mode=bool(inference_mode), mem=self._memory())
        self._last_mark = time.perf_counter()

    def epoch_end(self, *, complete=True):
        """The epoch is over (after its evaluation, as the core's trainer writes them)."""
        if not self.writes:
            return
        if not self._started:
            self.start()
        self._flush_steps()
        ep, now = self._epoch, time.perf_counter()
        rate = ep.samples / ep.train_seconds if ep.train_seconds > 0 else 0.0
        self._emit("epoch", 0, epoch=ep.index, seconds=now - ep.began, train_seconds=ep.train_seconds,
                   samples=ep.samples, train_samples_per_s=rate, samples_per_s=rate,
                   train_loss=ep.loss_total / ep.loss_n if ep.loss_n else math.nan, complete=bool(complete))
        self._epochs_done = ep.index
        self._epoch = _Epoch(ep.index + 1, now)
        self._last_mark = now

    def early_stop(self, *, reason, best_epoch=0, best_value=None, monitor="val_loss", epochs_saved=0):
        """Early stopping ended training (best_epoch: 1-based, 0 when none): the run ends early-stopped."""
        if not self.writes:
            return
        self._early_stop = {"reason": str(reason), "best_epoch": int(best_epoch or 0),
                            "best_value": _number(best_value), "monitor": str(monitor),
                            "epochs_saved": int(epochs_saved or 0)}
        self._emit("early_stop", 0, **self._early_stop)

    def warning(self, message, path=None):
        """A warning event (the window lists it with the run)."""
        if self.writes:
            self._emit("warning", 0, message=str(message), **({"path": str(path)} if path else {}))

    # ---- the summary -----------------------------------------------------------------------

    def _summary(self, status, error, message):
        now = time.perf_counter()
        epochs = self._epochs_done or (self._epoch.index if self._epoch and self._epoch.steps else 0)
        out = {"status": status, "run_id": self.run_id, "name": self.config["name"], "run_dir": self.run_dir,
               "device": self._device or "cpu", "world_size": self.world_size, "epochs": epochs,
               "steps": self._steps, "optimizer_steps": self._optimizer_steps, "samples": self._samples,
               "wall_s": now - (self._start_time or self._t0), "train_samples": self._samples,
               "train_s": self._train_s, "eval_s": self._eval_s, "run_wall_s": _system.process_age_seconds(),
               "cpu": self._cpu_summary(), "peak_mem": self._peak_mem or self._memory_peak_now()}
        if self._train_s > 0:
            out["train_samples_per_s"] = self._samples / self._train_s
        if self._first_step:
            out["time_to_first_step_s"], out["first_step_unix"] = self._first_step
        out.update(self._eval_summary())
        if error:
            out["error"] = str(error)
        if message:
            out["message"] = str(message)
        schema.check_fields("summary", out)
        return out

    def _eval_summary(self):
        accs = [a for _, _, a in self._evals if a is not None]
        losses = [l for _, l, _ in self._evals if l is not None]
        out = {"best_val_acc": max(accs) if accs else math.nan, "final_val_acc": accs[-1] if accs else math.nan}
        if losses:
            out["best_val_loss"] = min(losses)
        if self._early_stop and self._early_stop["best_epoch"] > 0:
            out["best_epoch"] = self._early_stop["best_epoch"]
            out["best_value"] = self._early_stop["best_value"]
        return out

    def _cpu_summary(self):
        """summary.cpu as a run alone records it, judged by the core's one rule (isContended)."""
        process, other, seconds = _system.cpu_share(self._cpu_start, _system.cpu_times())
        cores, threads = os.cpu_count() or 0, _system.threads()
        cpu = {"cores": cores, "asked_cores": threads, "threads": threads,
               "used_cores": process, "other_load_cores": other, "process_cores": process,
               "machine_busy_cores": process + other, "other_cores": other,
               "contended": other >= schema.CONTENDED_OTHER_CORES}
        if cpu["contended"]:
            cpu["note"] = (f"other processes used {other:.1f} of {cores} cores during this run: its speed is not "
                           "this machine's, and speedups against it are not reported")
        return cpu

    def _memory_peak_now(self):
        mem = _system.memory(self._device or "cpu")
        return mem["peak"] if (self._device or "cpu").startswith("cuda") else mem["rss_peak"]

    # ---- writing -------------------------------------------------------------------------

    def _emit(self, kind, rank, **fields):
        schema.check_fields(kind, fields)
        event = {"v": schema.EVENT_VERSION, "type": kind, "rank": rank, "t": time.perf_counter() - self._t0,
                 "wall": time.time(), **fields}
        self._try(lambda: self._write_line(_folder.encode_event(event) + "\n"))

    def _write_line(self, line):
        self._events.write(line)
        self._events.flush()  # one record a write, as the core's EventSink: a reader never sees half

    def _try(self, write):
        """A write the disk refuses is counted (summary.json says so), not raised into training."""
        try:
            write()
        except (OSError, RecorderError) as e:
            self._lost += 1
            self._write_error = str(e)
            if self._lost == 1:
                print(f"workbench_recorder: {self.run_dir}: {e} (the run will end failed)", file=sys.stderr)

    def _close(self):
        try:
            self._events.close()
        except OSError:
            pass
        os.close(self._lock_fd)  # the kernel would at exit; a script that goes on may start another run


def _number(value):
    """A float from a float, int or one-element tensor; None when absent."""
    if value is None:
        return None
    return float(value.item() if hasattr(value, "item") else value)


def _model_info(model):
    if model is None:
        return {}
    if isinstance(model, dict):
        return dict(model)
    try:
        parameters = sum(int(p.numel()) for p in model.parameters())
    except Exception:  # not a torch module: its name alone
        parameters = 0
    return {"name": type(model).__name__, "parameters": parameters}


def _end_at_exit(ref):
    """A script that never called end() (or left the with block by os._exit) still ends its run:
    failed, saying why, so the folder does not read as running for ever."""
    rec = ref()
    if rec is not None and rec.writes and rec.status is None:
        rec.end("failed", error="the process exited without Recorder.end() (use `with Recorder(...)`)")
