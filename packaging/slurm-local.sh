#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the tests: its own munged, slurmctld and slurmd,
# all state (slurm.conf, munge key, spool, logs, PID files) under one folder, nothing in /etc.
#   slurm-local.sh start  DIR   writes DIR/slurm.conf, starts the daemons, waits until the node is idle
#   slurm-local.sh stop   DIR   stops exactly the daemons whose PIDs DIR holds
#   slurm-local.sh status DIR   says whether the node answers
# Clients find it through SLURM_CONF=DIR/slurm.conf. Where it cannot start here (not root, the
# slurm-wlm / munge packages missing) start says why in DIR/unavailable and exits 0: the tests that
# need the cluster read that file and skip with its words. Any other failure to start exits 1.
set -uo pipefail

cmd=${1:-}
dir=${2:-${WB_SLURM_DIR:-}}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 64
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export SLURM_CONF="$dir/slurm.conf"
DAEMONS=(slurmd slurmctld munged)

# Running, not a zombie (a daemon's parent here may be an init that does not reap).
alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != "Z" ]; }

# Kills the daemon whose PID file is here, only if that PID still runs that program.
stop_one() {
  local name=$1 pidfile="$dir/$1.pid" pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null)
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$pidfile"
}

# This cluster's jobs end first (SLURM_CONF names only it), so no step outlives its slurmd.
stop_all() {
  if [ -f "$dir/slurmctld.pid" ] && [ -f "$dir/slurm.conf" ]; then
    local jobs
    jobs=$(timeout 5 squeue -h -o %i 2>/dev/null)
    [ -n "$jobs" ] && timeout 10 scancel $jobs 2>/dev/null
    for _ in $(seq 50); do [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for d in "${DAEMONS[@]}"; do stop_one "$d"; done
}

unavailable() {
  echo "$1" >"$dir/unavailable"
  echo "slurm-local: $1" >&2
  exit 0
}

# Two ports derived from the folder, so two build folders' clusters do not collide.
base_port() { echo $((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 10000 * 2)); }

write_conf() {
  local host cpus mem port
  host=$(hostname -s)
  cpus=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' | head -1)
  mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -1)
  port=$(base_port)
  mkdir -p "$dir/state" "$dir/spool"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=wbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
InactiveLimit=0
KillWait=15
MinJobAge=600
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if [ ! -s "$dir/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="$dir/munge.key" bs=1 count=1024 status=none) || return 1
  fi
  chmod 0700 "$dir"
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" 2>>"$dir/munged.log"
}

wait_idle() {
  local state
  for _ in $(seq 150); do
    state=$(sinfo -h -o %T 2>/dev/null | head -1)
    [ "$state" = "idle" ] && return 0
    sleep 0.2
  done
  echo "slurm-local: the node is '${state:-not answering}' after 30 s; see $dir/slurmctld.log and $dir/slurmd.log" >&2
  return 1
}

start() {
  rm -f "$dir/unavailable"
  [ "$(id -u)" -eq 0 ] || unavailable "not root: munged, slurmctld and slurmd start as root here (run the Slurm tests as root)"
  for p in munged slurmctld slurmd sinfo srun sbatch; do
    command -v "$p" >/dev/null || unavailable "$p is not on PATH: install the slurm-wlm and munge packages (packaging/setup.sh)"
  done
  stop_all  # a cluster left from an earlier run (its PIDs here) goes first
  rm -rf "$dir/state" "$dir/spool"
  write_conf
  start_munge || { echo "slurm-local: munged did not start; see $dir/munged.log" >&2; return 1; }
  slurmctld -i || { echo "slurm-local: slurmctld did not start; see $dir/slurmctld.log" >&2; return 1; }
  slurmd || { echo "slurm-local: slurmd did not start; see $dir/slurmd.log" >&2; return 1; }
  wait_idle || return 1
  echo "slurm-local: node $(hostname -s) idle; SLURM_CONF=$dir/slurm.conf" >&2
}

case "$cmd" in
  start) start ;;
  stop) stop_all ;;
  status) [ -f "$dir/slurm.conf" ] && sinfo -h -o '%N %T' ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 64 ;;
esac
