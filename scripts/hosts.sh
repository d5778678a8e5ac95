#!/bin/bash
# hosts.sh - simulated hosts on this one machine that share one directory
# only through a network filesystem (sshfs through a private sshd), as the
# nodes of a cluster share a spool on NFS.
#
#	scripts/hosts.sh up DIR HOST...      bring up the server and HOSTs
#	scripts/hosts.sh exec DIR HOST CMD...  run CMD on HOST (stdin, stdout,
#	                                     stderr and exit status are CMD's)
#	scripts/hosts.sh pids DIR HOST       the processes running on HOST
#	scripts/hosts.sh freeze DIR HOST     SIGSTOP every process started on
#	scripts/hosts.sh thaw DIR HOST       HOST / SIGCONT them (the host
#	                                     "hangs"; its mount stays up)
#	scripts/hosts.sh crash DIR HOST      SIGKILL every process started on
#	                                     HOST, wait until they are gone
#	                                     (its mount stays up)
#	scripts/hosts.sh cut DIR HOST        take HOST off the network / put it
#	scripts/hosts.sh heal DIR HOST       back (meanwhile its mount fails)
#	scripts/hosts.sh down DIR            stop and remove everything but
#	                                     DIR/shared
#
# The shared directory is DIR/shared.  On every HOST it is at the same
# path, DIR/shared, but there it is that host's own sshfs mount of the
# real directory: the processes of a host see the others' changes only
# through the network filesystem, and inotify on one host says nothing
# about another's changes (as on NFS).  Outside every HOST (the caller's
# own namespaces) DIR/shared is the real directory: that is the file
# server's view, where the tests look at the truth.
#
# Each HOST is a set of namespaces held open by one holder process:
#   - a network namespace with a veth link to the server's namespace
#     (10.77.K.2 <-> 10.77.K.1), so "cut" is a link going down;
#   - a UTS namespace with hostname HOST (what gethostname() says, so
#     what ckspool writes into lease owners, worker identities and
#     temporary names);
#   - a mount namespace holding the sshfs mount (a copy of the caller's,
#     without the FUSE mounts it had: fuse_copies_off).
# The server is a network namespace of its own in which a private sshd
# listens on port 22 (own config, own host key, key authentication only,
# root allowed, no password, nothing reachable from outside this
# machine); sshd itself runs in a copy of the caller's mount namespace
# (made by "ip netns exec", without its FUSE mounts), so its SFTP server
# reads and writes the real DIR/shared.
#
# sshfs options (HOSTS_SSHFS_OPTS overrides them), chosen to behave
# like an NFS mount with short attribute caching
# ("actimeo=1,lookupcache=positive"), and close to its close-to-open
# consistency (auto_cache, below, falls short of it within a second):
#   dir_cache=no          sshfs's own cache of listings and attributes
#                         (20 s by default) has no NFS counterpart: off;
#   attr_timeout=1, entry_timeout=1
#                         the kernel keeps attributes and names for 1 s,
#                         as NFS's attribute cache does (actimeo=1): a
#                         directory's stamp may be seen up to 1 s late;
#   negative_timeout=0    a name that did not exist is looked up again
#                         each time (NFS lookupcache=positive);
#   auto_cache            cached file data is dropped at open when the
#                         file's mtime or size changed, as the kernel
#                         knows them: within attr_timeout of a change
#                         made elsewhere an open may still read the old
#                         pages, where NFS would look again at the open
#                         (a test that rewrites a file on the server and
#                         reads it on a host waits for the new text);
#   ServerAliveInterval=1, ServerAliveCountMax=3
#                         a cut host's mount fails (ENOTCONN) after about
#                         3 s instead of hanging on a dead TCP connection
#                         for minutes; with "reconnect" it comes back
#                         when healed.
#
# Needs root (namespaces, mounts), and the Debian packages openssh-server,
# openssh-client, sshfs, fuse3, iproute2 and util-linux
# (scripts/install-deps.sh test).  Several DIRs may be up at once (the
# namespace names are derived from DIR).  Works without a terminal or
# stdin.  Exit status: 0, or 1 with a message naming what failed.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
me=hosts.sh

die() {
	echo "$me: $*" >&2
	exit 1
}

usage() {
	sed -n '6,20p' "$0" | sed 's/^#//' >&2
	exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
state=$dir/.hosts
# namespace and link names are global: derive them from DIR
tag=$(printf '%s' "$dir" | md5sum | cut -c1-6)
srvns=ckh$tag-srv

hostns() { echo "ckh$tag-$1"; }
holder() { cat "$state/$1/holder" 2>/dev/null; }

valid_host() {
	case $1 in
	''|*[!A-Za-z0-9-]*) die "host name '$1': letters, digits and - only" ;;
	esac
	[ ${#1} -le 20 ] || die "host name '$1': 20 characters at most"
}

# fuse_copies_off: run first in each new mount namespace (a host's, the
# server's sshd's).  Such a namespace starts with a copy of each of the
# caller's mounts, and this machine's mounts are private (no propagation,
# so "--propagation slave" below changes nothing): a FUSE mount copied
# into it (another test's spoolfs, another DIR's sshfs) would outlive its
# unmount in the caller's namespace, and its daemon would not see that
# unmount (ENODEV) until this host went down.  Detach every FUSE mount
# the namespace inherited; the host's own sshfs is mounted after.
fuse_copies_off() {
	local m
	for m in $(awk '$3 == "fuse" || $3 ~ /^fuse\./ { print $2 }' \
	    /proc/self/mounts); do
		umount -l "$(printf '%b' "$m")" ||
		    echo "hosts.sh: cannot detach the copy of the mount $m" >&2
	done
	return 0
}
export -f fuse_copies_off

# wait_until SECONDS CMD...: poll CMD every 50 ms until it succeeds
wait_until() {
	local n=$(($1 * 20))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.05
	done
}

need() {
	local t
	for t in sshd ssh ssh-keygen sshfs fusermount3 ip nsenter unshare; do
		command -v $t >/dev/null 2>&1 ||
		    die "$t not found (scripts/install-deps.sh build test)"
	done
	[ "$(id -u)" -eq 0 ] || die "must run as root (namespaces and mounts)"
}

server_up() {
	mkdir -p "$state/server" "$dir/shared" || die "mkdir $state"
	chmod 700 "$state" || die "chmod $state"
	if ! ip netns list | grep -qw "$srvns"; then
		ip netns add "$srvns" || die "ip netns add $srvns"
	fi
	ip -n "$srvns" link set lo up || die "lo up in $srvns"
	[ -f "$state/server/host_key" ] ||
	    ssh-keygen -q -t ed25519 -N '' -f "$state/server/host_key" </dev/null ||
	    die "ssh-keygen (host key)"
	[ -f "$state/client_key" ] ||
	    ssh-keygen -q -t ed25519 -N '' -f "$state/client_key" </dev/null ||
	    die "ssh-keygen (client key)"
	cp "$state/client_key.pub" "$state/server/authorized_keys" ||
	    die "authorized_keys"
	mkdir -p /run/sshd && chmod 755 /run/sshd || die "/run/sshd"
	cat > "$state/server/sshd_config" <<EOF
Port 22
ListenAddress 0.0.0.0
HostKey $state/server/host_key
PidFile $state/server/sshd.pid
AuthorizedKeysFile $state/server/authorized_keys
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
UseDNS no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
MaxStartups 100:30:200
MaxSessions 100
LogLevel ERROR
Subsystem sftp internal-sftp
EOF
	/usr/sbin/sshd -t -f "$state/server/sshd_config" ||
	    die "sshd refuses its configuration"
	if ! { [ -f "$state/server/sshd.pid" ] &&
	    kill -0 "$(cat "$state/server/sshd.pid")" 2>/dev/null; }; then
		ip netns exec "$srvns" bash -c 'fuse_copies_off &&
		    exec /usr/sbin/sshd "$@"' sshd -f "$state/server/sshd_config" \
		    -E "$state/server/sshd.log" </dev/null ||
		    die "sshd did not start: $(tail -3 "$state/server/sshd.log")"
		wait_until 10 test -s "$state/server/sshd.pid" ||
		    die "sshd wrote no pid file: $(tail -3 "$state/server/sshd.log")"
	fi
}

mounted() {	# HOST: the host's view of DIR/shared is its sshfs mount
	nsenter -t "$(holder "$1")" -m -- findmnt -n -t fuse.sshfs \
	    "$dir/shared" >/dev/null
}

host_up() {
	local h=$1 k=$2 ns hs pid opts
	ns=$(hostns "$h")
	hs=$state/$h
	mkdir -p "$hs" || die "mkdir $hs"
	if [ -n "$(holder "$h")" ] && kill -0 "$(holder "$h")" 2>/dev/null; then
		return 0
	fi
	ip netns list | grep -qw "$ns" && ip netns del "$ns"
	ip netns add "$ns" || die "ip netns add $ns"
	ip -n "$ns" link set lo up || die "lo up in $ns"
	ip link add "ck$tag$k" netns "$srvns" type veth peer name eth0 \
	    netns "$ns" || die "veth for $h"
	ip -n "$srvns" addr add "10.77.$k.1/24" dev "ck$tag$k" &&
	    ip -n "$srvns" link set "ck$tag$k" up &&
	    ip -n "$ns" addr add "10.77.$k.2/24" dev eth0 &&
	    ip -n "$ns" link set eth0 up || die "addresses for $h"
	cat > "$hs/ssh_config" <<EOF
Host server
  HostName 10.77.$k.1
  Port 22
  User root
  IdentityFile $state/client_key
  IdentitiesOnly yes
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  LogLevel ERROR
  BatchMode yes
  ServerAliveInterval 1
  ServerAliveCountMax 3
  ConnectTimeout 5
EOF
	opts=${HOSTS_SSHFS_OPTS:-dir_cache=no,attr_timeout=1,entry_timeout=1,negative_timeout=0,auto_cache,reconnect}
	# The holder: in the host's network namespace, new UTS and mount
	# namespaces; it names the host, mounts the share over DIR/shared
	# and then waits, holding the namespaces, until "down".
	rm -f "$hs/holder" "$hs/ready"
	setsid nsenter --net="/run/netns/$ns" -- unshare --uts --mount \
	    --propagation slave -- /bin/bash -c '
		fuse_copies_off
		hostname "$1" || exit 1
		sshfs -F "$2/ssh_config" -o "$3" -o allow_other \
		    "server:$4" "$4" 2>>"$2/sshfs.log" || exit 1
		echo $$ > "$2/holder.tmp" && mv "$2/holder.tmp" "$2/holder"
		exec sleep 2147483647' sh "$h" "$hs" "$opts" "$dir/shared" \
	    </dev/null >>"$hs/sshfs.log" 2>&1 &
	pid=$!
	wait_until 20 test -s "$hs/holder" || {
		kill "$pid" 2>/dev/null
		die "host $h: sshfs mount failed: $(tail -3 "$hs/sshfs.log")"
	}
	mounted "$h" || die "host $h: no sshfs mount on $dir/shared"
}

# every pid in HOST's network namespace, but its holder and sshfs
host_workload() {
	local h=$1 p hp
	hp=$(holder "$h")
	for p in $(ip netns pids "$(hostns "$h")" 2>/dev/null); do
		[ "$p" = "$hp" ] && continue
		case $(cat "/proc/$p/comm" 2>/dev/null) in sshfs|ssh) continue ;; esac
		echo "$p"
	done
}

host_down() {
	local h=$1 ns p
	ns=$(hostns "$h")
	if ip netns list | grep -qw "$ns"; then
		for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2>/dev/null; done
		wait_until 10 sh -c "[ -z \"\$(ip netns pids $ns)\" ]" ||
		    echo "$me: host $h: processes left: $(ip netns pids "$ns")" >&2
		ip netns del "$ns" || echo "$me: ip netns del $ns failed" >&2
	fi
	rm -rf "${state:?}/$h"
}

case $cmd in
up)
	[ $# -ge 1 ] || usage
	need
	for h in "$@"; do valid_host "$h"; done
	server_up
	k=$(ls "$state" | grep -c '^k\.' )
	for h in "$@"; do
		if [ -f "$state/k.$h" ]; then
			n=$(cat "$state/k.$h")
		else
			k=$((k + 1))
			[ $k -le 250 ] || die "too many hosts"
			n=$k
			echo $n > "$state/k.$h"
		fi
		host_up "$h" "$n"
	done
	;;
exec)
	[ $# -ge 2 ] || usage
	h=$1
	shift
	p=$(holder "$h")
	[ -n "$p" ] || die "no host $h in $dir (hosts.sh up)"
	wd=$PWD
	exec nsenter -t "$p" -m -u -n --wd="$wd" -- "$@"
	;;
pids)
	host_workload "$1"
	;;
freeze|thaw|crash)
	sig=STOP
	[ "$cmd" = thaw ] && sig=CONT
	[ "$cmd" = crash ] && sig=KILL
	for p in $(host_workload "$1"); do kill -$sig "$p" 2>/dev/null; done
	if [ "$cmd" = crash ]; then	# returns when they are gone
		wait_until 10 sh -c "[ -z \"\$('$0' pids '$dir' '$1')\" ]" ||
		    die "host $1: processes left: $(host_workload "$1")"
	fi
	;;
cut|heal)
	k=$(cat "$state/k.$1" 2>/dev/null) || die "no host $1 in $dir"
	updown=down
	[ "$cmd" = heal ] && updown=up
	ip -n "$srvns" link set "ck$tag$k" $updown || die "link $updown for $1"
	;;
down)
	rc=0
	for f in "$state"/k.*; do
		[ -e "$f" ] || continue
		host_down "${f##*/k.}"
		rm -f "$f"
	done
	if [ -f "$state/server/sshd.pid" ]; then
		p=$(cat "$state/server/sshd.pid")
		kill -TERM "$p" 2>/dev/null
		wait_until 10 sh -c "! kill -0 $p" || kill -KILL "$p" 2>/dev/null
	fi
	# sessions of sshd (sftp servers) live in its network namespace
	if ip netns list | grep -qw "$srvns"; then
		for p in $(ip netns pids "$srvns"); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$srvns" || { echo "$me: ip netns del $srvns failed" >&2; rc=1; }
	fi
	rm -rf "$state"
	exit $rc
	;;
*)
	usage
	;;
esac
