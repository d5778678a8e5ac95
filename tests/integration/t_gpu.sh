# t_gpu.sh - GPUs on a machine that has them (DESIGN.md invariant 4):
# the worker finds them through NVML, a task that asks for one sees that
# one alone (CUDA_VISIBLE_DEVICES, as CUDA itself reports it), its result
# carries gpu_util and gpu_memory_peak sampled through NVML, tasks take
# turns on a GPU, and a task without GPUs sees none.
#
# Needs an NVIDIA GPU, its driver (libcuda.so.1, libnvidia-ml.so.1) and
# nvidia-smi: run with CKSPOOL_BATCH=gpu (scripts/gpu-check.sh). The
# tasks are cuprobe (cuprobe.c, built by make into build/tests/), which
# uses the driver API the way a CUDA program does.
# needs: gpu

CUPROBE=$BIN/../build/tests/cuprobe

# the GPUs nvidia-smi sees, as "index uuid" lines
smi_gpus() {
	nvidia-smi --query-gpu=index,uuid --format=csv,noheader | tr -d ','
}

gpu_worker() {
	[ -x "$CUPROBE" ] || fail "no $CUPROBE (make builds it)"
	new_spool
	start_spoold
	unset CUDA_VISIBLE_DEVICES
	start_worker gpu --cores 2 "$@"
}

test_nvml_finds_the_gpus() {
	local n ids
	n=$(smi_gpus | wc -l)
	[ "$n" -ge 1 ] || fail "nvidia-smi lists no GPU"
	ids=$(seq 0 $((n - 1)) | paste -sd,)
	env -u CUDA_VISIBLE_DEVICES ckworker --print-resources > "$T/res" 2>&1 ||
	    fail "--print-resources: $(cat "$T/res")"
	assert_match "^gpus: $n: $ids \\(NVML\\)" "$(cat "$T/res")" \
	    "print-resources"
	assert_no_match "^gpu probe: .*NVML" "$(cat "$T/res")" "NVML loaded"
	# the batch system's narrowing wins over NVML
	CUDA_VISIBLE_DEVICES=0 ckworker --print-resources > "$T/res" 2>&1 ||
	    fail "--print-resources: $(cat "$T/res")"
	assert_match "^gpus: 1: 0 \\(CUDA_VISIBLE_DEVICES=0" "$(cat "$T/res")" \
	    "print-resources under CUDA_VISIBLE_DEVICES"
	echo "$(grep '^gpus' "$T/res"); nvidia-smi: $(smi_gpus | head -1)" \
	    >> "$T/report"
}

test_gpu_task_sees_its_gpu_alone_and_is_measured() {
	local id cpu uuid util peak
	gpu_worker --gpus 1
	id=$(spool submit --gpus 1 -- sh -c \
	    "'$CUPROBE' count && '$CUPROBE' burn 4 2048") || fail "submit"
	cpu=$(spool submit -- "$CUPROBE" count) || fail "submit"
	spool wait "$id" "$cpu" ||
	    fail "tasks failed: $(spool status -l "$id" "$cpu")"
	uuid=$(smi_gpus | awk '$1 == 0 { print $2 }')
	# CUDA itself sees one device, the worker's GPU 0
	assert_eq "1" "$(task_stdout "$id" | sed -n 1p)" "devices CUDA sees"
	assert_eq "$uuid" "$(task_stdout "$id" | sed -n 2p)" "its UUID"
	assert_match "^burned 2048 MiB" "$(task_stdout "$id" | sed -n 3p)" \
	    "the burn"
	assert_eq 0 "$(field "$id" gpu_ids)" "gpu_ids"
	assert_eq 1 "$(field "$id" gpus)" "gpus"
	# NVML sampled it while it ran: busy, and at least its 2 GiB
	util=$(field "$id" gpu_util)
	peak=$(field "$id" gpu_memory_peak)
	[ -n "$util" ] && awk -v u="$util" 'BEGIN { exit !(u > 0) }' ||
	    fail "gpu_util '$util' (want > 0)"
	[ -n "$peak" ] && [ "$peak" -ge $((2048 * 1048576)) ] ||
	    fail "gpu_memory_peak '$peak' (want at least 2 GiB)"
	# the task without GPUs: CUDA sees none, and nothing was sampled
	assert_eq "0" "$(task_stdout "$cpu")" "devices a CPU task sees"
	[ -z "$(field "$cpu" gpu_util)" ] || fail "gpu_util of a CPU task"
	echo "gpu_util $util%, gpu_memory_peak $peak bytes, GPU $uuid" \
	    >> "$T/report"
}

test_gpu_tasks_take_turns() {
	local a b
	gpu_worker --gpus 1
	a=$(spool submit --gpus 1 -- "$CUPROBE" burn 2 256) || fail "submit"
	b=$(spool submit --gpus 1 -- "$CUPROBE" burn 2 256) || fail "submit"
	spool wait "$a" "$b" || fail "tasks failed: $(spool status -l "$a" "$b")"
	assert_eq 0 "$(field "$a" gpu_ids)" "gpu_ids of $a"
	assert_eq 0 "$(field "$b" gpu_ids)" "gpu_ids of $b"
	# one GPU, two cores: the second started after the first ended
	awk -v s1="$(field "$a" start)" -v e1="$(field "$a" end)" \
	    -v s2="$(field "$b" start)" -v e2="$(field "$b" end)" \
	    'BEGIN { exit !(s2 >= e1 || s1 >= e2) }' ||
	    fail "the two GPU tasks overlapped: $(field "$a" start)-$(field "$a" end) and $(field "$b" start)-$(field "$b" end)"
	echo "task $a ran $(field "$a" start)-$(field "$a" end), task $b $(field "$b" start)-$(field "$b" end)" \
	    >> "$T/report"
}

# NVML's own threads must not take the worker's signals (main.c blocks
# them before it loads NVML): SIGTERM hands the running task back.
test_worker_with_nvml_hands_back_on_sigterm() {
	local id threads
	gpu_worker
	id=$(spool submit --gpus 1 -- "$CUPROBE" burn 300 64) || fail "submit"
	wait_for 20 state_is "$id" running || fail "not running"
	threads=$(ls /proc/"$WORKER_PID"/task | wc -l)
	kill -TERM "$WORKER_PID"
	wait "$WORKER_PID"
	assert_eq 0 "$?" "the worker's exit status after SIGTERM"
	wait_for 20 state_is "$id" queued ||
	    fail "the task was not handed back: $(spool status "$id")"
	echo "worker with NVML loaded ($threads threads): task handed back on SIGTERM, exit 0" \
	    >> "$T/report"
}
