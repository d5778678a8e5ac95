#!/usr/bin/env bash
# sge-up.sh - a single-node Grid Engine cell on this host, for the tests.
#
# Installs Debian's gridengine (8.1.9) if needed (scripts/install-deps.sh
# sge, after answering its debconf questions), starts sge_qmaster and
# sge_execd (no init system needed), and configures one queue, all.q,
# with a slot per core, a parallel environment "smp" and a scheduler
# that reacts within a second.  Idempotent: re-running with the daemons
# up only checks them.  scripts/sge-down.sh stops them.
#
# gridengine-client conflicts with slurm-wlm-torque (both own
# /usr/bin/qsub): the torque wrappers are removed first (Slurm itself
# stays).  Use: export SGE_ROOT=/var/lib/gridengine SGE_CELL=default.
#
# What this machine needs (see the lab notes): every name of this host
# resolves to 127.0.0.1, whose reverse name is "localhost", so
# host_aliases folds them onto one before sge_qmaster starts; root may
# run jobs (min_uid/min_gid 0) before sge_execd starts; daemons are
# stopped by pid file.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
export SGE_ROOT=/var/lib/gridengine SGE_CELL=default
here=$(cd "$(dirname "$0")" && pwd)
HOST=$(hostname -s)
work=$(mktemp -d "${TMPDIR:-/tmp}/sge-up.XXXXXX")
trap 'rm -rf "$work"' EXIT

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

if ! installed gridengine-master || ! installed gridengine-client ||
    ! installed gridengine-exec; then
	if installed slurm-wlm-torque; then
		apt-get remove -y -q slurm-wlm-torque </dev/null
	fi
	# the package's postinst makes the cell without asking
	debconf-set-selections <<EOF
gridengine-common shared/gridengineconfig boolean true
gridengine-common shared/gridenginecell string default
gridengine-common shared/gridenginemaster string $HOST
EOF
	"$here/install-deps.sh" sge
fi

COMMON=$SGE_ROOT/$SGE_CELL/common
aliases="$HOST localhost"
for a in $(getent hosts 127.0.0.1 | cut -d' ' -f2-) \
    $(awk '$1 == "127.0.0.1" { for (i = 2; i <= NF; i++) print $i }' /etc/hosts); do
	case " $aliases " in *" $a "*) ;; *) aliases="$aliases $a" ;; esac
done
echo "$aliases" > "$COMMON/host_aliases"
echo "$HOST" > "$COMMON/act_qmaster"
chown sgeadmin:sgeadmin "$COMMON/host_aliases" "$COMMON/act_qmaster"

. "$here/pidfile.sh"

QPID=/var/spool/gridengine/qmaster/qmaster.pid
if ! daemon_pid $QPID sge_qmaster > /dev/null; then
	/usr/sbin/sge_qmaster
	for _ in $(seq 100); do qconf -sh >/dev/null 2>&1 && break; sleep 0.1; done
fi
qconf -sh >/dev/null
qconf -ss 2>/dev/null | grep -qx "$HOST" || qconf -as "$HOST"
qconf -sh 2>/dev/null | grep -qx "$HOST" || qconf -ah "$HOST"

# root may run jobs; faster load reports
cat > "$work/global.sh" <<'EOF'
#!/bin/sh
sed -i -e 's/^min_uid .*/min_uid                      0/' \
    -e 's/^min_gid .*/min_gid                      0/' \
    -e 's/^load_report_time .*/load_report_time             00:00:10/' "$1"
EOF
chmod +x "$work/global.sh"
qconf -sconf global | grep -q '^min_uid  *0$' ||
	EDITOR=$work/global.sh qconf -mconf global >/dev/null

EPID=$(ls /var/spool/gridengine/execd/*/execd.pid 2>/dev/null | head -1 || true)
if [ -z "$EPID" ] || ! daemon_pid "$EPID" sge_execd > /dev/null; then
	/usr/sbin/sge_execd
	for _ in $(seq 100); do qconf -sel 2>/dev/null | grep -qx "$HOST" && break; sleep 0.1; done
fi

qconf -ssconf > "$work/sconf"
sed -i -e 's/^schedule_interval .*/schedule_interval                 0:0:1/' \
    -e 's/^flush_submit_sec .*/flush_submit_sec                  1/' \
    -e 's/^flush_finish_sec .*/flush_finish_sec                  1/' "$work/sconf"
qconf -Msconf "$work/sconf" >/dev/null

printf 'group_name @allhosts\nhostlist %s\n' "$HOST" > "$work/hgrp"
if qconf -shgrpl 2>/dev/null | grep -qx '@allhosts'; then
	qconf -Mhgrp "$work/hgrp" >/dev/null
else
	qconf -Ahgrp "$work/hgrp" >/dev/null
fi

# control_slaves TRUE: "spool start-workers" reaches other hosts of a
# parallel job through qrsh -inherit
cat > "$work/pe" <<'EOF'
pe_name            smp
slots              9999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $pe_slots
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
if qconf -spl 2>/dev/null | grep -qx smp; then
	qconf -Mp "$work/pe" >/dev/null
else
	qconf -Ap "$work/pe" >/dev/null
fi

cat > "$work/queue" <<EOF
qname                 all.q
hostlist              @allhosts
seq_no                0
load_thresholds       NONE
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               smp
rerun                 FALSE
slots                 $(nproc)
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
EOF
if qconf -sql 2>/dev/null | grep -qx all.q; then
	qconf -Mq "$work/queue" >/dev/null
else
	qconf -Aq "$work/queue" >/dev/null
fi

# wait for the execd's first load report: the queue's state is empty
# (not "u", unknown) once it has one
for _ in $(seq 300); do
	line=$(qstat -f -q all.q 2>/dev/null | awk -v q="all.q@$HOST" '$1 == q')
	[ -n "$line" ] && [ -z "$(echo "$line" | awk '{print $6}')" ] && break
	sleep 0.2
done
qstat -f -q all.q | awk -v q="all.q@$HOST" '$1 == q { print "all.q on", q, $3, "slots", $6 == "" ? "ok" : $6 }'
