# t_jobscript.sh - job scripts and configuration, against golden files
# (tests/golden/): no batch system needed.

GOLDEN=$(cd "$(dirname "${BASH_SOURCE[0]}")/../golden" && pwd)

golden_spool() {
	new_spool
	cp "$GOLDEN/jobscript.yaml" "$SPOOL/spool.yaml"
}

render() {	# KIND [ARGS...]: the script, with the spool path as SPOOL
	CKWORKER=/opt/ckspool/bin/ckworker spool job-script --kind "$@" |
	    sed "s#$SPOOL#SPOOL#g"
}

test_job_scripts_match_golden_files() {
	golden_spool
	for k in slurm sge pbs lsf; do
		render "$k" > "$T/$k.sh" || fail "job-script --kind $k failed"
		diff -u "$GOLDEN/jobscript-$k.sh" "$T/$k.sh" ||
		    fail "job script for $k differs from tests/golden/jobscript-$k.sh"
	done
	for k in slurm sge lsf; do
		render "$k" --array 5 > "$T/$k-array.sh"
		diff -u "$GOLDEN/jobscript-$k-array.sh" "$T/$k-array.sh" ||
		    fail "array job script for $k differs"
	done
	# the properties the issue names, spelled out
	assert_match "^#\\\$ -pe smp 8$" "$(cat "$T/sge.sh")" "SGE -pe"
	assert_match "^#\\\$ -l h_vmem=4G$" "$(cat "$T/sge.sh")" "SGE h_vmem"
	assert_match "^#\\\$ -V$" "$(cat "$T/sge.sh")" "SGE -V"
	assert_match "^#PBS -l select=1:ncpus=8:mem=30518mb:ngpus=1$" \
	    "$(cat "$T/pbs.sh")" "PBS select="
	assert_match '^#BSUB -R "span\[hosts=1\]"$' "$(cat "$T/lsf.sh")" \
	    "LSF span"
	assert_no_match "^#SBATCH --mem" "$(cat "$T/slurm.sh")" "skipped --mem"
	assert_match "^#SBATCH --array=1-5$" "$(cat "$T/slurm-array.sh")" "array"
	assert_match "^#\\$ -t 1-5$" "$(cat "$T/sge-array.sh")" "SGE array"
	assert_match '^#BSUB -J "ck-worker\[1-5\]"$' "$(cat "$T/lsf-array.sh")" \
	    "LSF array"
	# export-env: false is each backend's way of not passing it
	assert_match "^#SBATCH --export=NONE$" "$(cat "$T/slurm.sh")" "--export"
	assert_match '^#BSUB -env "none"$' "$(cat "$T/lsf.sh")" "-env none"
	assert_match "^export PYTHONPATH=/opt/lib:/opt/more$" "$(cat "$T/sge.sh")" \
	    "env"
	# the worker line carries the job's resources, limit methods (the
	# kind's own, and cpu-limit from the cluster section) and timeouts
	assert_match 'exec /opt/ckspool/bin/ckworker -S SPOOL --name slurm@"\$job" --job "\$job" --cores 8 --processes 2 --memory 31250000K --gpus 2 --memory-limit cgroup --cpu-limit cpuset --gpu-limit devices --walltime \$\(\(14400 - \(\$\(date \+%s\) - ckspool_t0\)\)\) --death-timeout 90000ms --idle-timeout 600000ms' \
	    "$(cat "$T/slurm.sh")" "ckworker line"
	assert_match ' --gpus 1 --cpu-limit auto --walltime ' "$(cat "$T/lsf.sh")" \
	    "a kind's cpu-limit over the cluster section's"
	# and it is a valid shell script
	for k in slurm sge pbs lsf; do
		bash -n "$T/$k.sh" || fail "$k.sh is not valid shell"
	done
	# --backend overrides the kind's backend
	render slurm --backend sge | grep -q '^#\$ -N ck-worker$' ||
	    fail "--backend sge ignored"
}

test_job_script_gets_the_job_id_from_the_environment() {
	golden_spool
	# run the script's shell part with a fake worker that prints its args
	mkdir "$T/fake"
	printf '#!/bin/sh\necho "$@"\n' > "$T/fake/ckworker"
	chmod +x "$T/fake/ckworker"
	for case in "slurm SLURM_JOB_ID=77 slurm@77" \
	    "slurm SLURM_JOB_ID=80 SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=3 slurm@77_3" \
	    "sge JOB_ID=12 SGE_TASK_ID=undefined sge@12" \
	    "sge JOB_ID=12 SGE_TASK_ID=4 sge@12.4" \
	    "pbs PBS_JOBID=901.server pbs@901" \
	    "pbs SLURM_JOB_ID=55 pbs@55" \
	    "lsf LSB_JOBID=7 LSB_JOBINDEX=0 lsf@7" \
	    "lsf LSB_JOBID=7 LSB_JOBINDEX=2 lsf@7.2"; do
		set -- $case
		kind=$1
		want=${!#}
		envs=("${@:2:$#-2}")
		CKWORKER=$T/fake/ckworker spool job-script --kind "$kind" |
		    grep -v '^module\|^source\|^mkdir' > "$T/run.sh"
		got=$(env -i PATH=/usr/bin:/bin "${envs[@]}" TMPDIR=$T \
		    bash "$T/run.sh" | sed -n 's/.*--name \([^ ]*\).*/\1/p')
		assert_eq "$want" "$got" "worker name for: $case"
	done
	# the walltime it gets is what the job has left after the prologue
	CKWORKER=$T/fake/ckworker spool job-script --kind slurm |
	    grep -v '^module\|^source\|^mkdir' > "$T/run.sh"
	left=$(env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 TMPDIR=$T \
	    bash "$T/run.sh" | sed -n 's/.*--walltime \([0-9]*\) .*/\1/p')
	[ -n "$left" ] && [ "$left" -le 14400 ] && [ "$left" -ge 14340 ] ||
	    fail "walltime passed: '$left' (kind: 4 hours)"
	printf 'sleep 2\n' > "$T/slow"
	sed -i "/^ckspool_t0=/r $T/slow" "$T/run.sh"
	left=$(env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 TMPDIR=$T \
	    bash "$T/run.sh" | sed -n 's/.*--walltime \([0-9]*\) .*/\1/p')
	[ -n "$left" ] && [ "$left" -le 14398 ] ||
	    fail "a 2 s prologue left the walltime at '$left'"
}

# local-directory as dask-jobqueue users write it ("$TMPDIR",
# "/scratch/$USER"): the job's shell expands its variables on the node,
# and nothing else (no command substitution); one that expands to no
# absolute path fails the job before the worker starts.
test_local_directory_variables_are_expanded_on_the_node() {
	new_spool
	cat > "$SPOOL/spool.yaml" <<-EOF
	cluster:
	  backend: slurm
	  local-directory: "\$CK_SCRATCH/\${USER}-tmp"
	EOF
	mkdir "$T/fake"
	printf '#!/bin/sh\necho "TMPDIR=$TMPDIR"\n' > "$T/fake/ckworker"
	chmod +x "$T/fake/ckworker"
	CKWORKER=$T/fake/ckworker spool job-script > "$T/run.sh" ||
	    fail "job-script"
	got=$(cd "$T" && env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 \
	    CK_SCRATCH="$T/node" USER=alice bash "$T/run.sh") ||
	    fail "the job failed: $(cat "$T/run.sh")"
	assert_eq "TMPDIR=$T/node/alice-tmp" "$got" "TMPDIR the worker got"
	[ -d "$T/node/alice-tmp" ] || fail "$T/node/alice-tmp not made"
	# unset on this node, or not absolute: the job fails and says why
	if (cd "$T" && env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 USER=alice \
	    bash "$T/run.sh" > "$T/out" 2> "$T/err"); then
		fail "a job without CK_SCRATCH ran"
	fi
	[ -s "$T/out" ] && fail "the worker started: $(cat "$T/out")"
	assert_match 'CK_SCRATCH: not set on this node, needed by local-directory' \
	    "$(cat "$T/err")"
	if (cd "$T" && env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 USER=alice \
	    CK_SCRATCH=node bash "$T/run.sh" > "$T/out" 2> "$T/err"); then
		fail "a job whose local directory is node/alice-tmp ran"
	fi
	[ -s "$T/out" ] && fail "the worker started: $(cat "$T/out")"
	assert_match 'local-directory \$CK_SCRATCH/\$\{USER\}-tmp is "node/alice-tmp" here, not an absolute path' \
	    "$(cat "$T/err")"
	# no command substitution, glob or word splitting
	cat > "$SPOOL/spool.yaml" <<-EOF
	cluster:
	  backend: slurm
	  local-directory: "$T/lit/\$(touch $T/ran) *"
	EOF
	CKWORKER=$T/fake/ckworker spool job-script > "$T/run.sh" ||
	    fail "job-script"
	got=$(cd "$T" && env -i PATH=/usr/bin:/bin SLURM_JOB_ID=5 \
	    bash "$T/run.sh") || fail "the job failed: $(cat "$T/run.sh")"
	assert_eq "TMPDIR=$T/lit/\$(touch $T/ran) *" "$got" "literal TMPDIR"
	[ -e "$T/ran" ] && fail "a \$(...) in local-directory ran"
	[ -d "$T/lit/\$(touch $T/ran) *" ] || fail "the literal directory"
	# a relative one would depend on where the job starts: refused
	printf 'cluster:\n  backend: slurm\n  local-directory: scratch/me\n' \
	    > "$SPOOL/spool.yaml"
	if spool config show > /dev/null 2> "$T/err"; then
		fail "a relative local-directory was taken"
	fi
	assert_match 'local-directory "scratch/me" must be an absolute path' \
	    "$(cat "$T/err")"
}

test_config_errors_name_file_line_and_key() {
	new_spool
	printf 'cluster:\n  backend: slurm\n  cores: 4\n  memroy: 8G\n' > "$SPOOL/spool.yaml"
	if spool config show 2>"$T/err"; then fail "typo accepted"; fi
	assert_match 'spool.yaml: line 4, column 3: unknown key "memroy" in "cluster"' \
	    "$(cat "$T/err")"
	printf 'cluster:\n  backend: condor\n' > "$SPOOL/spool.yaml"
	if spool config show 2>"$T/err"; then fail "condor accepted"; fi
	assert_match 'line 2, column 12: key "backend": unknown backend' "$(cat "$T/err")"
	printf 'cluster:\n  cores: 2\n  processes: 4\n' > "$SPOOL/spool.yaml"
	if spool config show 2>"$T/err"; then fail "processes > cores"; fi
	assert_match 'processes \(4\) is more than cores \(2\)' "$(cat "$T/err")"
	printf 'cluster:\n  walltime: soon\n' > "$SPOOL/spool.yaml"
	if spool config show 2>"$T/err"; then fail "bad walltime"; fi
	assert_match 'line 2, column 13: key "walltime": bad duration' "$(cat "$T/err")"
	printf 'cluster:\n  kinds:\n    "a/b": {cores: 2}\n' > "$SPOOL/spool.yaml"
	if spool config show 2>"$T/err"; then fail "bad kind name"; fi
	assert_match 'kind names are' "$(cat "$T/err")"
	# spoold refuses to start on a bad file, saying why
	printf 'cluster:\n  qeue: x\n' > "$SPOOL/spool.yaml"
	if spoold > "$T/spoold.out" 2>&1; then fail "spoold started"; fi
	assert_match 'unknown key "qeue"' "$(cat "$T/spoold.out")"
}

# spool config show shows every key in force: the daemon's settle,
# max-requeues, shared and journal-size, the cluster-wide keys, the
# worker section, and a kind's job settings and limit methods, not only
# some of them.
test_config_show_every_key_in_force() {
	local show
	new_spool
	cat > "$SPOOL/spool.yaml" <<-'EOF'
	daemon:
	  settle: 3s
	  max-requeues: 7
	  shared: yes
	  journal-size: 8M
	cluster:
	  poll-interval: 5s
	  max-submit-failures: 4
	  scale-down-delay: 90s
	  backend: slurm
	  name: myjob
	  resource-spec: h_vmem=1G
	  parallel-environment: smp
	  local-directory: /scratch
	  shebang: "#!/bin/bash"
	  job-extra-directives: ["--exclusive"]
	  job-directives-skip: ["--mem"]
	  memory-limit: watchdog
	  gpu-limit: env
	worker:
	  cpu-limit: affinity
	EOF
	show=$(spool config show) || fail "config show"
	assert_match "^  settle 3.0s, max-requeues 7, shared yes, journal-size 8M$" \
	    "$(sed -n 2p <<<"$show")" "daemon, second line"
	assert_match "^cluster: poll-interval 5.0s, max-submit-failures 4, scale-down-delay 90.0s$" \
	    "$(sed -n 3p <<<"$show")" "cluster-wide keys"
	assert_eq "worker: memory-limit auto, cpu-limit affinity, gpu-limit auto" \
	    "$(sed -n 4p <<<"$show")" "the worker section"
	for k in "name: myjob" "resource-spec: h_vmem=1G" \
	    "parallel-environment: smp" "local-directory: /scratch" \
	    "shebang: #!/bin/bash" "job-extra-directives: --exclusive" \
	    "job-directives-skip: --mem" "memory-limit: watchdog" \
	    "gpu-limit: env"; do
		assert_eq 1 "$(grep -cxF "  $k" <<<"$show")" "$k shown"
	done
}

test_import_dask_jobqueue_yaml() {
	new_spool
	spool config import "$GOLDEN/jobqueue.yaml" > "$T/spool.yaml" ||
	    fail "import failed"
	diff -u "$GOLDEN/jobqueue-spool.yaml" "$T/spool.yaml" ||
	    fail "import differs from tests/golden/jobqueue-spool.yaml"
	# the result is a valid configuration with the same meaning
	cp "$T/spool.yaml" "$SPOOL/spool.yaml"
	show=$(spool config show) || fail "imported config rejected"
	assert_match "kind default: backend sge, 10 cores, 1 process, memory 59.6G" "$show"
	script=$(spool job-script)
	assert_match '^#\$ -pe threaded 10$' "$script"
	assert_eq 1 "$(grep -c -- '^#\$ -cwd$' <<<"$script")" "one -cwd"
	# each dropped key has a note
	for k in interface worker-extra-args scheduler-options nanny; do
		assert_match "^#   $k .*: " "$(cat "$T/spool.yaml")" "note for $k"
	done
	# several backends need --backend
	printf 'jobqueue:\n  slurm: {cores: 2}\n  pbs: {cores: 4}\n' > "$T/two.yaml"
	if spool config import "$T/two.yaml" 2>"$T/err"; then fail "ambiguous"; fi
	assert_match "choose one with --backend" "$(cat "$T/err")"
	spool config import "$T/two.yaml" --backend pbs | grep -q '^  cores: 4$' ||
	    fail "--backend pbs"
	# options before the file, as every other command takes them
	spool config import --backend pbs "$T/two.yaml" |
	    grep -q '^  cores: 4$' || fail "--backend pbs before the file"
	spool config import --backend=slurm "$T/two.yaml" |
	    grep -q '^  cores: 2$' || fail "--backend=slurm"
}

# The two imports the audit found wrong, through to the job script: LSF's
# walltime is [HH:]MM (dask's default "00:30" is 30 minutes), and the
# seed's SGE notes ask "-pe threaded 10" with cores: 1 (10 slots); dask's
# "_" spellings are the same keys.
test_import_lsf_walltime_and_sge_slots_reach_the_job_script() {
	new_spool
	cat > "$T/lsf.yaml" <<'EOF'
jobqueue:
  lsf:
    cores: 4
    memory: 8GB
    walltime: '00:30'
    job_extra_directives: ['-R "select[avx]"']
    job_script_prologue: ['module load x']
    local_directory: /scratch/me
    use_stdin: true
EOF
	spool config import "$T/lsf.yaml" > "$SPOOL/spool.yaml" ||
	    fail "lsf import failed"
	conf=$(cat "$SPOOL/spool.yaml")
	assert_match '^  walltime: "00:30:00"$' "$conf"
	assert_match "^#   walltime \"00:30\": LSF's -W is \[HH:\]MM" "$conf"
	assert_match '^  job-extra-directives: \["-R \\"select\[avx\]\\""\]$' "$conf"
	assert_match '^  local-directory: "/scratch/me"$' "$conf"
	assert_match '^#   use_stdin \(line 9\): ckspool always submits' "$conf"
	assert_no_match "not a key ckspool knows" "$conf" "underscore keys"
	script=$(CKWORKER=/opt/ckspool/bin/ckworker spool job-script) ||
	    fail "imported lsf config rejected"
	assert_match '^#BSUB -W 00:30$' "$script" "LSF -W round trip"
	assert_match '^#BSUB -R "select\[avx\]"$' "$script"
	assert_match '^module load x$' "$script"
	assert_match '^export TMPDIR=/scratch/me$' "$script"
	assert_match ' --walltime \$\(\(1800 - ' "$script" "30 minutes"

	cat > "$T/sge.yaml" <<'EOF'
jobqueue:
  sge:
    walltime: '99:99:99'
    resource_spec: h_vmem=64G
    queue: 256G-batch
    job_extra: ['-cwd', '-V', '-pe threaded 10']
    cores: 1
    processes: 1
    memory: 1GB
EOF
	spool config import "$T/sge.yaml" > "$SPOOL/spool.yaml" ||
	    fail "sge import failed"
	conf=$(cat "$SPOOL/spool.yaml")
	assert_match '^  cores: 10$' "$conf" "the 10 slots are the cores"
	assert_match '^#   job_extra "-pe threaded 10": became parallel-environment: threaded and cores: 10, since the job gets 10 slots' \
	    "$conf"
	show=$(spool config show) || fail "imported sge config rejected"
	assert_match "kind default: backend sge, 10 cores, 1 process" "$show"
	script=$(CKWORKER=/opt/ckspool/bin/ckworker spool job-script)
	assert_match '^#\$ -pe threaded 10$' "$script" "10 slots asked"
	assert_eq 1 "$(grep -c -- '^#\$ -pe' <<<"$script")" "one -pe"
	assert_match '^#\$ -l h_vmem=64G$' "$script"
	assert_match ' --cores 10 ' "$script" "the worker runs 10 cores"
}

test_scale_writes_sizes_and_refuses_nonsense() {
	golden_spool
	spool scale 6 --kind slurm 2>"$T/err" || fail "scale"
	# dask-style workers: 6 workers of 2 processes each = 3 jobs
	assert_match "kind slurm: 3 jobs" "$(cat "$T/err")"
	assert_match "^jobs: 3$" "$(cat "$SPOOL/scale/slurm")"
	spool scale --jobs 4 --kind sge 2>/dev/null
	assert_match "^jobs: 4$" "$(cat "$SPOOL/scale/sge")"
	spool adapt --minimum 1 --maximum 10 --kind pbs 2>/dev/null
	assert_match "^mode: adapt$" "$(cat "$SPOOL/scale/pbs")"
	assert_match "^maximum: 5$" "$(cat "$SPOOL/scale/pbs")"
	if spool scale 2 --kind nope 2>"$T/err"; then fail "unknown kind"; fi
	assert_match 'no worker kind "nope".*slurm sge pbs lsf' "$(cat "$T/err")"
	if spool adapt --minimum 5 --maximum 2 --kind pbs 2>/dev/null; then
		fail "minimum > maximum"
	fi
}
