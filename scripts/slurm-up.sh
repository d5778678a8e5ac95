#!/usr/bin/env bash
# slurm-up.sh - a single-node Slurm cluster on this host, for the tests.
#
# Installs Debian's Slurm and munge if needed (scripts/install-deps.sh
# slurm), writes a slurm.conf
# for this host (one partition "debug", this node with what slurmd -C
# measures), starts munged, slurmctld and slurmd (no systemd needed),
# and waits until the node is idle.  Idempotent: re-running with the
# daemons up only checks them.  scripts/slurm-down.sh stops them.
#
# WITH_TORQUE=1 also installs slurm-wlm-torque (PBS-style qsub, qdel,
# qstat wrappers); it conflicts with gridengine-client (both own qsub),
# so Grid Engine is stopped and its packages removed first.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
LOG=/var/log/slurm
STATE=/var/lib/slurm

here=$(cd "$(dirname "$0")" && pwd)
sets=slurm
if [ "${WITH_TORQUE:-0}" = 1 ]; then
	sets="slurm torque"
	# the torque wrappers and Grid Engine's client both own /usr/bin/qsub
	if dpkg-query -W -f='${Status}' gridengine-client 2>/dev/null |
	    grep -q 'ok installed'; then
		"$here/sge-down.sh" || true
		apt-get remove -y -q gridengine-client gridengine-exec \
		    gridengine-master </dev/null
	fi
fi
# packages by name (install-deps.sh); daemons are started below, never
# by the packages (there may be no init system)
"$here/install-deps.sh" $sets

HOST=$(hostname -s)
getent hosts "$HOST" >/dev/null || echo "127.0.0.1 $HOST" >> /etc/hosts
NODELINE=$(slurmd -C | head -1)
REALMEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODELINE")
NODELINE=$(sed "s/RealMemory=[0-9]*/RealMemory=$((REALMEM - 256))/" <<<"$NODELINE")
install -d -m 0755 $LOG $STATE/slurmctld $STATE/slurmd

cat > /etc/slurm/slurm.conf.new <<EOF
# written by ckspool scripts/slurm-up.sh
ClusterName=ckspool
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
MaxArraySize=10001
MinJobAge=300
KillWait=5
# without this every sbatch waits about 3 s before it is scheduled
SchedulerParameters=batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/linux
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG/jobcomp.txt
$NODELINE State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
changed=0
if ! cmp -s /etc/slurm/slurm.conf.new /etc/slurm/slurm.conf; then
	mv /etc/slurm/slurm.conf.new /etc/slurm/slurm.conf
	changed=1
else
	rm -f /etc/slurm/slurm.conf.new
fi

. "$here/pidfile.sh"

install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
	/usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
	    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null
	chown munge:munge /etc/munge/munge.key
	chmod 0400 /etc/munge/munge.key
fi
daemon_pid /run/munge/munged.pid munged > /dev/null || runuser -u munge -- /usr/sbin/munged
for _ in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n </dev/null | unmunge >/dev/null

if [ $changed = 1 ]; then
	daemon_stop /run/slurmd.pid slurmd
	daemon_stop /run/slurmctld.pid slurmctld
fi
daemon_pid /run/slurmctld.pid slurmctld > /dev/null || /usr/sbin/slurmctld
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
daemon_pid /run/slurmd.pid slurmd > /dev/null || /usr/sbin/slurmd
for _ in $(seq 200); do
	case "$(sinfo -h -N -o %T 2>/dev/null | head -1)" in
	idle*|mixed*|allocated*) break ;;
	esac
	sleep 0.1
done
case "$(sinfo -h -N -o %T | head -1)" in
down*|drain*) scontrol update NodeName="$HOST" State=RESUME ;;
esac
sinfo -h -N -o '%N %T %c cpus %m MB'
