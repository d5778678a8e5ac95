#!/usr/bin/awk -f
# table.awk - the benchmark's raw TSV (bench/run.sh) as one markdown
# table: per scenario, system and N, the median and min-max over the
# repetitions (or samples), the ratio of medians to the floor of the same
# scenario and N in the same run, and the target where ckspool has one.
# Where a system's repetitions ran in turn with the floor's (throughput,
# the tasks' CPU, the daemons' CPU against the spawner's own, and the
# layouts of bench/layoutsim.c, their time and CPU), the ratio is
# followed by the lowest and highest ratio of one repetition to the
# floor's repetition of the same number, "1.26x (1.26-1.65)": the
# floor's own spread moves the ratio of medians.
# A floor is a system named "floor" or "floor: HOW"; a scenario
# "shared:X" (the spool on sshfs) is compared with the floor of X, and
# the placement rate with many queued with the one with 10,000 queued.
BEGIN { FS = "\t" }
NR == 1 { next }
$1 == "failed" { failed[++nf] = $2; next }
{
	key = $1 SUBSEP $2 SUBSEP $3
	if (!(key in cnt)) { order[++nk] = key }
	if ($2 ~ /^floor(:|$)/) floorof[$1 SUBSEP $3] = key
	v[key, ++cnt[key]] = $5 + 0
	rep[key, cnt[key]] = $4
	byrep[key, $4] = $5 + 0
	unit[key] = $6
}
function median(key,    n, i, j, t, a) {
	n = cnt[key]
	for (i = 1; i <= n; i++) a[i] = v[key, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	lo[key] = a[1]; hi[key] = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function target(scen, sys, n,    s) {
	if (sys == "spoolfs" && scen == "fuse:read-result") return "<= 2x"
	if (sys != "ckspool") return ""
	if (scen == "throughput:true" && n == 10000) return "<= 1.25x"
	if (scen == "throughput:sleep 0.01") return "<= 1.05x"
	if (scen == "latency" || scen == "latency (hyperfine)") return "median <= 2 ms"
	if (scen ~ /^cpu-per-task/) return "<= 50 us"
	if (scen ~ /^fsops/) return "<= 20"
	if (scen == "scale:submit-rate") return ">= 20000/s"
	if (scen == "scale:rss-per-task") return "<= 200 B"
	if (scen == "scale:restart") return "<= 5 s"
	if (scen == "scale:placement-rate") return "within 10% of 10k"
	return ""
}
# " (LO-HI)": the ratios of key's repetitions to fl's of the same number,
# where at least two repetitions have one; "" elsewhere
function repratios(key, fl,    i, r, x, n, l, h) {
	for (i = 1; i <= cnt[key]; i++) {
		r = rep[key, i]
		if (!((fl, r) in byrep) || byrep[fl, r] <= 0) continue
		x = byrep[key, r] / byrep[fl, r]
		if (n++ == 0 || x < l) l = x
		if (n == 1 || x > h) h = x
	}
	return n >= 2 ? sprintf(" (%.2f-%.2f)", l, h) : ""
}
function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x) }
END {
	for (i = 1; i <= nk; i++) med[order[i]] = median(order[i])
	print "| scenario | system | N | median | min-max | unit | vs floor | target |"
	print "|---|---|---:|---:|---:|---|---:|---|"
	for (i = 1; i <= nk; i++) {
		split(order[i], f, SUBSEP)
		base = f[1]
		sub(/^shared:/, "", base)
		fl = floorof[base SUBSEP f[3]]
		# (no ratio for shares: "cores-idle", in %)
		ratio = fl != "" && med[fl] > 0 && f[2] !~ /^floor/ && \
		    unit[order[i]] != "%" ? sprintf("%.2fx", med[order[i]] / med[fl]) : ""
		# the spawner's CPU is the floor of both daemons together, not
		# of either alone ("ckspool (spoold)", "ckspool (ckworker)")
		if (f[1] ~ /^cpu-per-task:/ && f[2] ~ /^ckspool \(/)
			ratio = ""
		if (ratio != "" && f[1] ~ /^(throughput|task-cpu|cpu-per-task|layout|layout-cpu):/)
			ratio = ratio repratios(order[i], fl)
		# the placement rate's reference is its own 10k spool
		ref = f[1] SUBSEP f[2] SUBSEP 10000
		if (f[1] == "scale:placement-rate" && f[3] != 10000 && \
		    (ref in med) && med[ref] > 0)
			ratio = sprintf("%+.1f%% vs 10k", \
			    (med[order[i]] / med[ref] - 1) * 100)
		printf "| %s | %s | %s | %s | %s-%s | %s | %s | %s |\n", f[1], f[2], f[3],
		    fmt(med[order[i]]), fmt(lo[order[i]]), fmt(hi[order[i]]), unit[order[i]],
		    ratio, target(f[1], f[2], f[3])
	}
	for (i = 1; i <= nf; i++) printf "\nFAILED: %s\n", failed[i]
}
