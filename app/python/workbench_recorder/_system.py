"""What the recorder reads from the machine, the way the C++ core reads it (core/common sysinfo).

Linux /proc and the standard library only; a figure that cannot be read is 0 (or None), never an
exception: measuring must not stop the user's training.
"""
import os
import platform
import resource
import socket
import sys
import time

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)


def _read(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def host_info():
    """start.host: the machine's name, CPU model and logical cores (wb::hostName & co)."""
    cpu = "unknown"
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name") and ":" in line:
            cpu = line.split(":", 1)[1].strip()
            break
    return {"name": socket.gethostname() or "unknown", "cpu": cpu, "cores": os.cpu_count() or 0}


def wall_seconds():
    """The clock CPU shares are taken over (the core's boottime clock: it counts suspend too)."""
    return time.clock_gettime(_BOOTTIME) if _BOOTTIME is not None else time.monotonic()


def machine_busy_seconds():
    """/proc/stat's cpu line: every core's time not idle and not iowait, in seconds."""
    fields = _read("/proc/stat").split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu":
        return 0.0
    values = [float(v) for v in fields[1:9]]
    return sum(v for i, v in enumerate(values) if i not in (3, 4)) / _TICKS


def _process_cpu_seconds(pid):
    stat = _read(f"/proc/{pid}/stat")
    rest = stat[stat.rfind(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / _TICKS if len(rest) > 12 else 0.0  # utime, stime


def _workers_cpu_seconds():
    """CPU seconds of the live child processes multiprocessing started (DataLoader workers are
    processes in Python, threads in the core: counted as the run's own, not as other load).
    multiprocessing knows its children: no walk of /proc, which costs milliseconds a read."""
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return 0.0
    return sum(_process_cpu_seconds(p.pid) for p in mp.active_children() if p.pid)


def _self_stat():
    """(own CPU seconds, ended children's CPU seconds, minor faults) from /proc/self/stat: one
    read, where getrusage() walks every thread (milliseconds with torch's thread pools)."""
    stat = _read("/proc/self/stat")
    rest = stat[stat.rfind(")") + 2:].split()
    if len(rest) < 15:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return own.ru_utime + own.ru_stime, 0.0, own.ru_minflt
    return (int(rest[11]) + int(rest[12])) / _TICKS, (int(rest[13]) + int(rest[14])) / _TICKS, int(rest[7])


def cpu_times():
    """(process CPU seconds, machine busy seconds, wall seconds), like wb::readCpuTimes. The
    process's figure counts its descendants, live and ended (DataLoader workers)."""
    own, ended, _ = _self_stat()
    return own + ended + _workers_cpu_seconds(), machine_busy_seconds(), wall_seconds()


def cpu_share(a, b):
    """(process cores, other cores, seconds) between two cpu_times(): wb::cpuShareBetween."""
    seconds = b[2] - a[2]
    if seconds <= 0:
        return 0.0, 0.0, 0.0
    process = (b[0] - a[0]) / seconds
    other = 0.0
    if a[1] > 0 and b[1] > 0:
        other = max(0.0, ((b[1] - a[1]) - (b[0] - a[0])) / seconds)
    return process, other, seconds


def rss_bytes():
    """(resident set size now, its peak), in bytes, from /proc/self/status (VmRSS, VmHWM)."""
    rss = peak = 0
    for line in _read("/proc/self/status").splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    return rss, peak


def minor_faults():
    return _self_stat()[2]


def process_age_seconds():
    """Seconds since this process was started (its exec): what the user ran is what is measured."""
    stat = _read("/proc/self/stat")
    uptime = _read("/proc/uptime").split()
    end = stat.rfind(")")
    if end < 0 or not uptime:
        return 0.0
    rest = stat[end + 2:].split()
    return max(0.0, float(uptime[0]) - int(rest[19]) / _TICKS) if len(rest) > 19 else 0.0


def torch_module():
    """torch when the user's script imported it: the recorder itself never imports it."""
    return sys.modules.get("torch")


def versions():
    """start.versions: what the figures were measured with."""
    out = {"python": platform.python_version()}
    torch = torch_module()
    if torch is not None:
        out["torch"] = str(getattr(torch, "__version__", ""))
        version = getattr(torch, "version", None)
        out["cuda"] = str(getattr(version, "cuda", "") or "")
        try:
            out["cudnn"] = str(torch.backends.cudnn.version() or "") if out["cuda"] else ""
        except Exception:  # a broken CUDA install must not stop the run
            out["cudnn"] = ""
    return out


def threads():
    """Intra-op threads: torch's when the script uses torch, else the logical cores."""
    torch = torch_module()
    try:
        return int(torch.get_num_threads()) if torch is not None else (os.cpu_count() or 0)
    except Exception:
        return os.cpu_count() or 0


def cuda_device(preferred=None):
    """The device the run trains on: `preferred` when given, else "cuda:N" once the script has
    initialised CUDA, else "cpu"."""
    if preferred:
        return str(preferred)
    torch = torch_module()
    try:
        if torch is not None and torch.cuda.is_initialized():
            return f"cuda:{torch.cuda.current_device()}"
    except Exception:
        pass
    return "cpu"


def memory(device, faults_per_step=None):
    """A step's (or an evaluation's) mem: the caching allocator's figures on CUDA, the RSS on the
    CPU (alloc and reserved are the RSS there, and peak its peak: proto::MemoryPart)."""
    rss, rss_peak = rss_bytes()
    mem = {"device": device, "rss": rss, "rss_peak": rss_peak}
    torch = torch_module()
    if device.startswith("cuda") and torch is not None:
        try:
            index = torch.device(device)
            mem.update(alloc=int(torch.cuda.memory_allocated(index)), reserved=int(torch.cuda.memory_reserved(index)),
                       peak=int(torch.cuda.max_memory_allocated(index)))
        except Exception:
            mem.update(alloc=rss, reserved=rss, peak=rss_peak)
    else:
        mem.update(alloc=rss, reserved=rss, peak=rss_peak)
    if faults_per_step is not None:
        mem["page_faults_per_step"] = faults_per_step
    return mem
