#!/usr/bin/env bash
# A two-node Slurm cluster on this one host, for the engine tests (tests/e2e/test_slurm.py) and for trying the
# README's "Scaling out" recipe without a cluster:
#
#   .ci/slurm_cluster.sh start DIR   # munged + slurmctld + slurmd -N n1 + slurmd -N n2, all state under DIR
#   export SLURM_CONF=DIR/slurm.conf # what sbatch/squeue/scancel (and tokenmill's slurm executor) read
#   .ci/slurm_cluster.sh stop DIR    # stops only the daemons it started (their pid files under DIR)
#
# Debian's slurm-wlm 22.05 + munge (`apt-get install -y slurm-wlm munge`); run as root (slurmd must be able to
# start jobs as the submitting user). Each node has one CPU; nodes are n1 and n2 on their own loopback ports,
# partition `debug`. select/cons_tres schedules by CPU; proctrack/linuxproc and task/none need no cgroups (a
# container has none to give). No accounting daemon: tokenmill waits on `squeue`, not `sacct`.
set -euo pipefail

cmd=${1:?usage: slurm_cluster.sh start|stop DIR}
dir=${2:?usage: slurm_cluster.sh start|stop DIR}

stop() {
  for pidfile in "$dir"/slurmd-n1.pid "$dir"/slurmd-n2.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    if [ -s "$pidfile" ]; then
      pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null || true
      # wait (bounded) for the daemon to exit, so a following start does not find its port taken
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "$pidfile"
    fi
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch squeue; do
  command -v "$tool" >/dev/null 2>&1 || { echo "slurm_cluster: $tool not found (apt-get install -y slurm-wlm munge)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "slurm_cluster: needs root (slurmd runs jobs as their user)" >&2; exit 3; }

dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
mkdir -p "$dir/state" "$dir/spool/n1" "$dir/spool/n2" "$dir/munge"
chmod 700 "$dir/munge"

# munge: a fresh key and its own socket, so a host munged (if any) is left alone
if [ ! -s "$dir/munge/munge.key" ]; then
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 600 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munge.seed"

read -r ctld_port n1_port n2_port < <(python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
EOF
)

cat >"$dir/slurm.conf" <<EOF
ClusterName=tokenmill-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$n1_port CPUs=1 RealMemory=4000 State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$n2_port CPUs=1 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF

export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N n1
slurmd -f "$SLURM_CONF" -N n2

# ready when both nodes report idle (bounded: 60 s)
for _ in $(seq 300); do
  idle=$(sinfo -h -N -o "%N %t" 2>/dev/null | awk '$2=="idle"' | wc -l)
  [ "$idle" -ge 2 ] && { echo "slurm_cluster: up ($SLURM_CONF)"; exit 0; }
  sleep 0.2
done
echo "slurm_cluster: nodes did not become idle; see $dir/slurmctld.log, $dir/slurmd-n1.log" >&2
sinfo -N >&2 || true
stop
exit 4
