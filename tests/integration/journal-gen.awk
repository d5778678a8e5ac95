# journal-gen.awk - a synthetic journal of a finished run, for the tests of
# spool report at scale (t_observe.sh): awk -v N=TASKS -v W=WORKERS -v S=SLOTS
# -v DIR=SPOOL/journal -v T0=UNIXTIME -f journal-gen.awk.  Writes a spoold
# segment and one segment per worker, in the format of spool-layout(5);
# every 53rd task fails with exit 3, the others succeed.  The segments
# are named for T0 in milliseconds, written as T0 and "000": mawk's %d
# stops at 2^31 - 1, so "%013d" of T0 * 1000 named them 0002147483647.
function rnd_dur(   u) { u = rand(); return 0.05 + (u * u * u) * 20 }
BEGIN {
	srand(42)
	sp = sprintf("%s/%d000.spoold.login1.100.aaaaaaaa", DIR, T0)
	printf "%.3f login1 spoold - start pid=100\n", T0 > sp
	for (w = 0; w < W; w++) {
		wid[w] = sprintf("node%d-%06x", w, w * 4099)
		wf[w] = sprintf("%s/%d000.ckworker.node%d.%d.bbbbbb%02x", DIR, T0, w, 200 + w, w % 256)
		printf "%.3f login1 worker %s registered host=node%d cores=%d memory=68719476736 gpus=0 slots=%d\n", T0, wid[w], w, S, S > sp
		for (s = 0; s < S; s++) free_at[w * S + s] = T0 + 1
	}
	for (i = 1; i <= N; i++) {
		ts = T0 + 0.5 + i * 0.001
		printf "%.3f login1 task %d submitted name=job-%d uid=0 cores=1\n", ts, i, i % 50 > sp
		printf "%.3f login1 task %d accepted state=queued\n", ts + 0.01, i > sp
		# earliest free slot
		best = 0
		for (k = 1; k < W * S; k++) if (free_at[k] < free_at[best]) best = k
		w = int(best / S)
		st = free_at[best] > ts + 0.02 ? free_at[best] : ts + 0.02
		d = rnd_dur()
		en = st + d
		free_at[best] = en + 0.005
		fail = (i % 53 == 0)
		printf "%.3f login1 task %d placed att=1 worker=%s\n", st - 0.004, i, wid[w] > sp
		printf "%.3f node%d task %d started att=1 worker=%s cores=1 pid=%d\n", st, w, i, wid[w], 1000 + i > wf[w]
		mem = int(1048576 * (1 + rand() * 300))
		if (fail) {
			res = sprintf("att=1 state=failed reason=exit worker=%s host=node%d exit=3 start=%.3f end=%.3f wall=%.3f utime=0.1 stime=0.0 maxrss=%d cores=1 msg=\"exited with status 3\"", wid[w], w, st, en, d, mem)
		} else {
			res = sprintf("att=1 state=done reason=exit worker=%s host=node%d exit=0 start=%.3f end=%.3f wall=%.3f utime=0.1 stime=0.0 maxrss=%d cores=1", wid[w], w, st, en, d, mem)
		}
		printf "%.3f node%d task %d finished %s\n", en, w, i, res > wf[w]
		printf "%.3f login1 task %d final %s\n", en + 0.01, i, res > sp
	}
}
