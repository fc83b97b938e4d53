#!/usr/bin/env bash
# Stop the one-node SLURM cluster of scripts/slurm/start.sh.
#
#   scripts/slurm/stop.sh [--state DIR]
#
# Cancels the cluster's jobs (their job steps outlive slurmd otherwise), then stops the
# three daemons by the PIDs in the state folder's PID files: slurmd, slurmctld, munged.
# A PID counts only while /proc says it is still that daemon (a PID can be reused after a
# reboot); nothing is looked up or stopped by process name. Removes the
# /etc/slurm/slurm.conf link when it points into the state folder. Keeps the state folder
# (logs) and the installed packages. Running it twice is harmless.
set -euo pipefail

STATE=/tmp/kgrank-slurm
die() { echo "slurm/stop.sh: $2" >&2; exit "$1"; }
while (($#)); do
    case $1 in
        --state) STATE=${2:?}; shift 2 ;;
        -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die 2 "unknown option '$1' (see --help)" ;;
    esac
done
[[ -d $STATE ]] || die 2 "no state folder $STATE (nothing started there)"

pid_of() {  # the PID recorded for daemon $1, if that process is still that daemon
    local pid
    pid=$(cat "$STATE/$1.pid" 2>/dev/null) || return 1
    # still that program (Debian's slurmctld is a link to slurmctld-wlm)
    [[ $pid =~ ^[0-9]+$ && $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$(command -v "$1")")" ]] \
        && echo "$pid"
}

if pid_of slurmctld >/dev/null && [[ -f $STATE/slurm.conf ]]; then
    export SLURM_CONF=$STATE/slurm.conf
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    if [[ -n $jobs ]]; then
        # shellcheck disable=SC2086  # one job id a word
        scancel $jobs || true
        for _ in $(seq 50); do
            [[ -z $(squeue -h -t running,completing -o %i 2>/dev/null || true) ]] && break
            sleep 0.2
        done
    fi
fi

stopped=()
for daemon in slurmd slurmctld munged; do
    pid=$(pid_of "$daemon") || continue
    kill -TERM "$pid"
    for _ in $(seq 50); do
        [[ -d /proc/$pid ]] || break
        sleep 0.2
    done
    if [[ -d /proc/$pid ]]; then
        kill -KILL "$pid"
    fi
    stopped+=("$daemon ($pid)")
done

if [[ $(readlink /etc/slurm/slurm.conf 2>/dev/null || true) == "$STATE/slurm.conf" ]]; then
    rm -f /etc/slurm/slurm.conf
fi
echo "slurm/stop.sh: stopped ${stopped[*]:-nothing (no daemon of $STATE was running)}"
