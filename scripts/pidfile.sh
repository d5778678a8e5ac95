# pidfile.sh - find and stop a daemon by its pid file, sourced by the
# bring-up and tear-down scripts (POSIX sh).
#
# A pid file can outlive its daemon (Grid Engine leaves them behind on
# a clean stop; any daemon does when it is killed), and its number may
# belong to another process by now: a number is trusted only when the
# process that has it is called NAME (/proc/PID/comm).
#
#	daemon_pid PIDFILE NAME   prints the daemon's pid; status 1 if
#	                          it is not running
#	daemon_stop PIDFILE NAME  SIGTERM, up to 15 s, then SIGKILL; a
#	                          pid file left behind is removed

daemon_pid() {
	[ -s "$1" ] || return 1
	_dp=$(cat "$1" 2>/dev/null) || return 1
	case $_dp in '' | *[!0-9]*) return 1 ;; esac
	[ "$(cat "/proc/$_dp/comm" 2>/dev/null)" = "$2" ] || return 1
	echo "$_dp"
}

daemon_stop() {
	if ! _ds=$(daemon_pid "$1" "$2"); then
		rm -f "$1"
		return 0
	fi
	kill -TERM "$_ds" 2>/dev/null || return 0
	for _ in $(seq 150); do
		daemon_pid "$1" "$2" > /dev/null || { rm -f "$1"; return 0; }
		sleep 0.1
	done
	echo "$2 ($_ds) did not stop on SIGTERM: SIGKILL"
	kill -KILL "$_ds" 2>/dev/null
	rm -f "$1"
}
