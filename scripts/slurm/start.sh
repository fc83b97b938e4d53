#!/usr/bin/env bash
# Start a one-node SLURM cluster on this machine, to run the workflow through the SLURM
# executor plugin for real (tests/test_cluster.py; README, "The published configurations").
#
#   scripts/slurm/start.sh [--state DIR] [--cpus N] [--memory MB] [--gpus 0|1] [--partitions A,B]
#   scripts/slurm/stop.sh  [--state DIR]
#
# Debian or Ubuntu, as root; no systemd, no cgroups, no accounting database. Idempotent:
# with the same options a second call finds the cluster up and does nothing.
#
# What it changes on the machine:
#   - installs Debian's slurmctld, slurmd, slurm-client and munge (apt-get) when missing;
#   - writes everything else under the state folder (default /tmp/kgrank-slurm): the
#     config, a munge key of its own, spool and state folders, logs (apt-get's too) and
#     the daemons' PID files, which are the only thing stop.sh stops;
#   - links /etc/slurm/slurm.conf to the state folder's slurm.conf: slurm-jobstep clears the
#     SLURM_* variables before its inner srun, so SLURM_CONF alone does not reach it;
#   - creates munge's runtime folder /run/munge, where SLURM's auth/munge plugin finds
#     munged's socket.
#
# The node may be declared larger than the machine (--cpus, --memory, --gpus; default: what
# `slurmd -C` finds, no GPU), so that a profile's requests (8 threads, 64000 MB and a GPU
# for training) are accepted as written on a small machine. SLURM then schedules by the
# declared sizes (SlurmdParameters=config_overrides) and enforces nothing: no cgroups.
# A declared GPU (--gpus 1) is a generic resource whose device file is /dev/null: jobs
# that ask for it are scheduled as GPU jobs and compute on the CPU.
#
# Exit status: 0 up; 2 bad option; 3 this machine cannot host the cluster (not root, no
# apt-get, packages not installable, /etc/slurm/slurm.conf belongs to another cluster);
# 1 a daemon did not come up (its log is named).
set -euo pipefail

STATE=/tmp/kgrank-slurm
CPUS=""
MEMORY=""
GPUS=0
# the partition names of workflow/profiles/slurm; the first is the default partition
PARTITIONS=cpu,gpu

die() { echo "slurm/start.sh: $2" >&2; exit "$1"; }
positive() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die 2 "$1 needs a positive integer, got '$2'"; }

while (($#)); do
    case $1 in
        --state) STATE=${2:?}; shift 2 ;;
        --cpus) positive "$1" "${2-}"; CPUS=$2; shift 2 ;;
        --memory) positive "$1" "${2-}"; MEMORY=$2; shift 2 ;;
        # one device file (/dev/null) stands for the GPU, so one at most
        --gpus) [[ ${2-} =~ ^[01]$ ]] || die 2 "--gpus needs 0 or 1, got '${2-}'"; GPUS=$2; shift 2 ;;
        --partitions)
            [[ ${2-} =~ ^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$ ]] || die 2 "--partitions needs names separated by commas, got '${2-}'"
            PARTITIONS=$2; shift 2 ;;
        -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die 2 "unknown option '$1' (see --help)" ;;
    esac
done
[[ $STATE = /* ]] || die 2 "--state needs an absolute path, got '$STATE'"
# slurmd puts the sockets of job steps in its spool folder: a unix socket path has 107 bytes
((${#STATE} <= 60)) || die 2 "--state path too long for slurmd's sockets (60 characters at most): $STATE"

((EUID == 0)) || die 3 "needs root (daemons, /etc/slurm/slurm.conf, /run/munge)"
CONF_LINK=/etc/slurm/slurm.conf
CONF=$STATE/slurm.conf
if [[ -e $CONF_LINK || -L $CONF_LINK ]] && [[ $(readlink "$CONF_LINK" || true) != "$CONF" ]]; then
    die 3 "$CONF_LINK exists and is not this cluster's (a link to $CONF); stop or remove that cluster first"
fi

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }'; }

# -- install ------------------------------------------------------------------------
started=$(seconds)
missing=()
for command in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge; do
    command -v "${command%%:*}" >/dev/null || missing+=("${command#*:}")
done
if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die 3 "${missing[*]} missing and no apt-get to install them"
    # update once: a fresh container has no package lists
    mkdir -p "$STATE/log"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends slurmctld slurmd slurm-client munge; } >"$STATE/log/apt.log" 2>&1; then
        die 3 "could not install ${missing[*]} (no package access?): $(tail -n 1 "$STATE/log/apt.log")"
    fi
    echo "slurm/start.sh: installed ${missing[*]} in $(elapsed "$started") s"
fi

# -- configure ------------------------------------------------------------------------
started=$(seconds)
mkdir -p "$STATE"/{ctld,spool,log}
# munged runs as the munge user and keeps its files in $STATE/munge: it must get through
# (mktemp -d makes folders only root can enter)
chmod go+x "$STATE"
install -d -o munge -g munge -m 0700 "$STATE/munge"
# `slurmd -C`: this machine's CPUs and memory, the defaults of the node's declared size
read -r found_cpus found_memory < <(slurmd -C | awk '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END { print v["CPUs"], v["RealMemory"] }')
CPUS=${CPUS:-$found_cpus}
MEMORY=${MEMORY:-$found_memory}
gres_types="" node_gres="" gres_conf=""
if ((GPUS > 0)); then
    gres_types="GresTypes=gpu"
    node_gres="Gres=gpu:$GPUS"
    # a count with no device file: slurmd reports what gres.conf says
    gres_conf="NodeName=localhost Name=gpu Count=$GPUS File=/dev/null"
fi
partitions=""
default=YES
for partition in ${PARTITIONS//,/ }; do
    partitions+="PartitionName=$partition Nodes=localhost Default=$default MaxTime=INFINITE State=UP"$'\n'
    default=NO
done

conf=$(cat <<EOF
# written by scripts/slurm/start.sh; $CONF_LINK links here
ClusterName=kgrank
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
# no systemd, no cgroups
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# no accounting database: sacct fails, so Snakemake's plugin needs --slurm-status-command squeue
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
# memory is requested and checked against the node, but not a consumable: a job's
# --mem does not keep the others off the node
SelectTypeParameters=CR_Core
# schedule by the declared node, whatever the machine has
SlurmdParameters=config_overrides
ReturnToService=2
# finished jobs stay visible to squeue (the plugin's status command here) and scontrol
# (the test reads each job's request back) for 30 minutes: longer than a whole test run
MinJobAge=1800
MailProg=/bin/true
$gres_types
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEMORY $node_gres State=UNKNOWN
$partitions
EOF
)

alive() {  # alive NAME: the daemon whose PID file is in the state folder still runs
    local pid
    pid=$(cat "$STATE/$1.pid" 2>/dev/null) || return 1
    # still that program (Debian's slurmctld is a link to slurmctld-wlm)
    [[ $pid =~ ^[0-9]+$ && $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$(command -v "$1")")" ]]
}

if alive munged && alive slurmctld && alive slurmd; then
    if [[ $conf == "$(cat "$CONF")" ]]; then
        echo "slurm/start.sh: already running (state $STATE)"
        exit 0
    fi
    die 2 "a cluster with another node or partitions runs from $STATE; stop it first (scripts/slurm/stop.sh --state $STATE)"
fi
printf '%s\n' "$conf" >"$CONF"
# the daemons read gres.conf from the folder of $SLURM_CONF (with -f, from /etc/slurm)
printf '%s\n' "$gres_conf" >"$STATE/gres.conf"
ln -sfn "$CONF" "$CONF_LINK"

export SLURM_CONF=$CONF

# -- start ---------------------------------------------------------------------------
wait_for() {  # wait_for SECONDS COMMAND...: true once COMMAND succeeds, false after SECONDS
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}

if ! alive munged; then
    [[ -s $STATE/munge/munge.key ]] || runuser -u munge -- mungekey --create --keyfile="$STATE/munge/munge.key"
    install -d -o munge -g munge -m 0755 /run/munge
    # --force: the state folder may sit under /tmp, which munged calls insecure (writable
    # by all, though sticky)
    runuser -u munge -- munged --force --key-file="$STATE/munge/munge.key" \
        --pid-file="$STATE/munge/munged.pid" --log-file="$STATE/munge/munged.log" \
        --seed-file="$STATE/munge/munged.seed" </dev/null >/dev/null 2>&1 \
        || die 1 "munged did not start; see $STATE/munge/munged.log"
    ln -sfn munge/munged.pid "$STATE/munged.pid"
    wait_for 20 munge -n || die 1 "munged does not answer; see $STATE/munge/munged.log"
fi
if ! alive slurmctld; then
    slurmctld </dev/null >/dev/null 2>&1 || die 1 "slurmctld did not start; see $STATE/log/slurmctld.log"
    wait_for 30 scontrol ping || die 1 "slurmctld does not answer; see $STATE/log/slurmctld.log"
fi
if ! alive slurmd; then
    slurmd -N localhost </dev/null >/dev/null 2>&1 || die 1 "slurmd did not start; see $STATE/log/slurmd.log"
fi
node_idle() { [[ $(sinfo -h -n localhost -o %t | head -n 1) == idle ]]; }
wait_for 30 node_idle \
    || die 1 "node localhost not idle: $(sinfo -h -n localhost -o '%T, %E' | head -n 1); see $STATE/log/slurmd.log"
echo "slurm/start.sh: cluster up in $(elapsed "$started") s (node localhost: $CPUS CPUs, $MEMORY MB, $GPUS GPUs; partitions $PARTITIONS; state $STATE)"
