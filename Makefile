# ckspool - a task spooler whose state is files on shared storage.
#
#   make            build bin/spool bin/spoold bin/ckworker bin/spoolfs
#   make demo       install dependencies, build, run the demo (local backend)
#   make bench      install the peers, run the benchmark (bench/run.sh)
#   make check      install test dependencies, run the whole test suite
#   make unit       unit tests only (cmocka)
#   make integration  integration tests only (real processes)
#   make install    bin/, the man pages, the systemd unit spoold@.service
#                   and the logrotate file under $(DESTDIR)$(PREFIX)
#                   (default /usr/local), the notebook client under
#                   PYTHONDIR; make uninstall removes what install put there
#   make fuzz       libFuzzer targets of the parsers (clang), each for
#                   FUZZ_SECONDS (default 20) on tests/fuzz/corpus/NAME
#   make clean
#
# Out-of-tree variants: O=build/asan SAN=1 builds with AddressSanitizer
# and UndefinedBehaviorSanitizer into build/asan/bin.  CC=clang works.

O	?= .
BIN	:= $(O)/bin
OBJ	:= $(O)/build/obj
CC	?= cc
SAN	?= 0

CFLAGS	?= -O2 -g
WARN	:= -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wpointer-arith -Wvla -Wformat=2 \
	   -Wno-format-nonliteral
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Ispool-layout
LDLIBS	:= -lyaml

ifeq ($(SAN),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=all
LDFLAGS	+= -fsanitize=address,undefined
endif

# SAN=fuzz (clang only, "make fuzz"): the library instrumented for
# libFuzzer, with ASan and UBSan; the targets link libFuzzer's main.
# A bundle file is read 61 bytes at a time there, not 1 MiB, so that
# fuzz inputs (64 KiB at most) cross its pieces (fuzz_bundle.c).
ifeq ($(SAN),fuzz)
ALL_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined \
	      -fno-omit-frame-pointer -fno-sanitize-recover=all \
	      -DBUNDLE_READ_CHUNK=61u
LDFLAGS	+= -fsanitize=fuzzer,address,undefined
endif

LIB_SRC	:= $(sort $(wildcard spool-layout/*.c))
SPOOLD_SRC := $(sort $(wildcard spoold/*.c))
WORKER_SRC := $(sort $(wildcard ckworker/*.c))
CLI_SRC	:= $(sort $(wildcard cli/*.c))
FUSE_SRC := $(sort $(wildcard fuse/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

LIB	:= $(OBJ)/libspool.a
PROGS	:= $(BIN)/spool $(BIN)/spoold $(BIN)/ckworker $(BIN)/spoolfs
UNITS	:= $(patsubst tests/unit/%.c,$(O)/build/tests/%,$(UNIT_SRC))

obj = $(patsubst %.c,$(OBJ)/%.o,$(1))

# tests/integration/cuprobe.c: the CUDA task of t_gpu.sh (driver API
# through dlopen: builds without a toolkit, runs only where a GPU is);
# fakenvml.c: a one-GPU NVML with a thread of its own, for t_limits.sh;
# clockshift.c: a wall clock ahead or behind (a host's), for t_run.sh
TEST_HELPERS := $(O)/build/tests/cuprobe \
	$(O)/build/tests/fakenvml/libnvidia-ml.so.1 \
	$(O)/build/tests/clockshift.so

all: $(PROGS) $(TEST_HELPERS)

$(O)/build/tests/cuprobe: tests/integration/cuprobe.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -ldl

# without the sanitizers: it is loaded into whichever build is tested
$(O)/build/tests/fakenvml/libnvidia-ml.so.1: tests/integration/fakenvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O2 -fPIC -shared -pthread \
	    -o $@ $<

# without the sanitizers, as fakenvml
$(O)/build/tests/clockshift.so: tests/integration/clockshift.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O2 -fPIC -shared -o $@ $< -ldl

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(call obj,$(LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN)/spoold: $(call obj,$(SPOOLD_SRC)) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ckworker: hwloc for the core topology; libdl to load NVML or the CUDA
# runtime at run time (never linked, so it builds and runs without them);
# a thread for the group commit's syncfs (flusher.c)
WORKER_LDLIBS := -lhwloc -ldl -pthread

$(BIN)/ckworker: $(call obj,$(WORKER_SRC)) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(WORKER_LDLIBS)

# spool, the command line, starts at every submission and every wait,
# so its start is on every task's latency.  It is linked statically
# against musl (CLI_LIBC=musl, the default; musl-tools): glibc's start
# probes the CPU's caches with cpuid, which traps to the hypervisor on a
# virtual machine, 0.6 ms of a static glibc program's 0.7 ms start on
# the test VM against 0.1 ms for all of a musl one (doc/performance.md,
# "Why `spool` is linked with musl").  Its objects and the library's are
# compiled a second time, by $(CC) on musl's headers, into $(OBJ)/musl;
# libyaml is Debian's libyaml.a (plain C on FILE pointers; only its
# header is taken from /usr/include).  spool uses neither NSS nor dlopen.
# CLI_LIBC=glibc links it static-pie against glibc instead, and
# sanitizer builds link it dynamically against glibc, as they must.
CLI_LIBC ?= musl
ifneq ($(SAN),0)
CLI_LIBC := glibc-dynamic
endif
MUSL_CC	?= musl-gcc
MUSL_INC := /usr/include/$(shell uname -m)-linux-musl
CLI_OBJ	:= $(OBJ)/musl

ifeq ($(CLI_LIBC),musl)
CLI_CFLAGS := -nostdinc -isystem $(MUSL_INC) -isystem $(CLI_OBJ)/include \
	      -isystem $(shell $(CC) -print-file-name=include)
LIBYAML_A := $(shell $(CC) -print-file-name=libyaml.a)

# yaml.h alone from the system's headers, none of glibc's beside it
$(CLI_OBJ)/include/yaml.h: /usr/include/yaml.h
	@test -f $(MUSL_INC)/stdio.h || { echo "spool is linked with musl:" \
	    "$(MUSL_INC) is missing (scripts/install-deps.sh build installs" \
	    "musl-tools; make CLI_LIBC=glibc builds without it)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	ln -sf $< $@

$(CLI_OBJ)/%.o: %.c $(CLI_OBJ)/include/yaml.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CLI_CFLAGS) -MMD -MP -c -o $@ $<

$(BIN)/spool: $(patsubst %.c,$(CLI_OBJ)/%.o,$(CLI_SRC) $(LIB_SRC))
	@mkdir -p $(dir $@)
	$(MUSL_CC) -static $(LDFLAGS) -o $@ $^ $(LIBYAML_A)
else
ifeq ($(CLI_LIBC),glibc)
CLI_LDFLAGS := -static-pie
endif

$(BIN)/spool: $(call obj,$(CLI_SRC)) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(CLI_LDFLAGS) -o $@ $^ $(LDLIBS) -lm
endif

# spoolfs (fuse/): libfuse3, found by pkg-config (libfuse3-dev)
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3)

$(OBJ)/fuse/%.o: fuse/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(FUSE_CFLAGS) -MMD -MP -c -o $@ $<

$(BIN)/spoolfs: $(call obj,$(FUSE_SRC)) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(FUSE_LIBS)

$(O)/build/tests/%: $(OBJ)/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# test_deps tests spoold's dependency resolution: it also links the two
# spoold modules it exercises (before the library, which they use).
$(O)/build/tests/test_deps: $(OBJ)/tests/unit/test_deps.o \
	    $(OBJ)/spoold/deps.o $(OBJ)/spoold/table.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# test_place tests how many tasks spoold gives a worker: it links
# spoold/place.o (before the library, which it uses).
$(O)/build/tests/test_place: $(OBJ)/tests/unit/test_place.o \
	    $(OBJ)/spoold/place.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# test_spoold_batch tests what spoold reads from batch systems: it links
# spoold/batch.o (before the library, which it uses).
$(O)/build/tests/test_spoold_batch: $(OBJ)/tests/unit/test_spoold_batch.o \
	    $(OBJ)/spoold/batch.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Unit tests of ckworker's modules link those modules (before the
# library, which they use); gpu.c loads NVML with dlopen.
WORKER_UNIT_OBJ := $(call obj,ckworker/batch.c ckworker/cgfiles.c \
	    ckworker/cgroup.c ckworker/cores.c ckworker/gpu.c \
	    ckworker/ptree.c ckworker/taskenv.c ckworker/taskspawn.c)
WORKER_UNITS := $(patsubst %,$(O)/build/tests/test_%,batch cgroup cores gpu \
	    ptree taskenv taskspawn)

$(WORKER_UNITS): $(O)/build/tests/%: $(OBJ)/tests/unit/%.o \
	    $(WORKER_UNIT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl -lcmocka

# test_spoolfs tests spoolfs's pure modules (inode numbers, what a
# submitted text is); they need no libfuse.
$(O)/build/tests/test_spoolfs: $(OBJ)/tests/unit/test_spoolfs.o \
	    $(OBJ)/fuse/ino.o $(OBJ)/fuse/subform.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# test_fsck runs "spool fsck" (cli/fsck.o) while a worker directory or a
# file is removed at a chosen open or read, or a stat fails: it wraps
# fsop_opendir, fsop_read_file, fsop_open_regular and fsop_stat, and
# stands in for cli_open (cli/main.c).
$(O)/build/tests/test_fsck: $(OBJ)/tests/unit/test_fsck.o \
	    $(OBJ)/cli/fsck.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -Wl,--wrap=fsop_opendir -Wl,--wrap=fsop_read_file \
	    -Wl,--wrap=fsop_open_regular -Wl,--wrap=fsop_stat -o $@ $^ \
	    $(LDLIBS) -lcmocka

# ---- fuzzing (tests/fuzz/README; scripts/fuzz.sh) ----

FUZZ_O	?= build/fuzz
FUZZ_SECONDS ?= 20
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZERS	:= $(patsubst tests/fuzz/%.c,$(O)/build/fuzz/%,$(FUZZ_SRC))

$(O)/build/fuzz/%: $(OBJ)/tests/fuzz/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# built with SAN=fuzz CC=clang (what "make fuzz" does)
fuzzers: $(FUZZERS)

fuzz: test-deps
	$(MAKE) O=$(FUZZ_O) CC=clang SAN=fuzz fuzzers
	scripts/fuzz.sh $(FUZZ_O)/build/fuzz $(FUZZ_SECONDS)

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# ---- dependencies (apt, by package name; idempotent) ----

deps:
	scripts/install-deps.sh build

test-deps:
	scripts/install-deps.sh build test

# ---- tests ----

unit: $(UNITS)
	@scripts/run-unit.sh $(UNITS)

integration: $(PROGS)
	@BIN=$(abspath $(BIN)) tests/integration/run.sh

check: test-deps
	@scripts/check.sh

demo: deps
	$(MAKE) all
	scripts/demo.sh

# ---- benchmark (bench/run.sh; doc/performance.md) ----

BENCH_BIN := $(O)/build/bench
BENCH_TOOLS := $(BENCH_BIN)/floor $(BENCH_BIN)/lat $(BENCH_BIN)/wq_manager \
	$(BENCH_BIN)/readlat $(BENCH_BIN)/roundtrip $(BENCH_BIN)/fusefloor \
	$(BENCH_BIN)/layoutsim

$(BENCH_BIN)/%: bench/%.c bench/benchutil.h
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O2 -o $@ $<

# scenario 6's least FUSE filesystem, on spoolfs's libfuse3
$(BENCH_BIN)/fusefloor: bench/fusefloor.c bench/benchutil.h
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) $(FUSE_CFLAGS) -O2 -o $@ $< \
	    $(FUSE_LIBS)

# Work Queue's manager library (coop-computing-tools-dev) is static
$(BENCH_BIN)/wq_manager: bench/wq_manager.c bench/benchutil.h
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O2 -o $@ $< \
	    -lwork_queue -ldttools -lm -lz

bench-deps:
	scripts/install-deps.sh build bench

bench: bench-deps
	$(MAKE) all $(BENCH_TOOLS)
	BIN=$(abspath $(BIN)) BENCH_BIN=$(abspath $(BENCH_BIN)) bench/run.sh

# ---- installation (README.md, "Installing") ----
#
# The four programs go into one directory: spoold starts the ckworker
# beside its own binary (spoold(8), CKWORKER), and so do its job
# scripts, so that directory must be reachable by the same path on the
# compute nodes (a shared /opt, or the same package on every node).
# PYTHONDIR: where the python3 found first looks under PREFIX (on
# Debian's, /usr/local/lib/python3.11/dist-packages for /usr/local and
# /usr/lib/python3/dist-packages for /usr); under a PREFIX it does not
# look into, PREFIX/lib/pythonX.Y/site-packages (or dist-packages, as
# that python names them), to be put on PYTHONPATH.  Empty skips the
# client.
# SYSTEMDUNITDIR: the template unit spoold@.service, its ExecStart
# naming BINDIR's spoold; systemd reads /usr/local/lib/systemd/system
# and /usr/lib/systemd/system, not a unit directory under another
# PREFIX (systemctl link it, or give SYSTEMDUNITDIR=/etc/systemd/system).
# LOGROTATEDIR: the logrotate file ckspool, under SYSCONFDIR
# (PREFIX/etc, /etc for PREFIX=/usr); logrotate reads /etc/logrotate.d
# only (README.md, "Installing").  Neither directory is outside PREFIX
# unless asked: a user can install under $HOME/.local.

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
LOGROTATEDIR ?= $(SYSCONFDIR)/logrotate.d
PYTHON	?= python3
PYTHONDIR ?= $(shell $(PYTHON) -c 'import sys; v = sys.version_info; \
	print(next((p for p in sys.path if p.startswith("$(PREFIX)/lib/") \
	and p.endswith("-packages")), "$(PREFIX)/lib/python%d.%d/%s" % (v[0], \
	v[1], "dist-packages" if any(p.endswith("dist-packages") \
	for p in sys.path) else "site-packages")))' 2>/dev/null)
MANS	:= doc/man/spool.1 doc/man/ckworker.1 doc/man/spoolfs.1 \
	   doc/man/spoold.8 doc/man/spool-layout.5

install: $(PROGS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(PROGS) $(DESTDIR)$(BINDIR)
	for m in $(MANS); do \
	    install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.} || exit 1; \
	done
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(LOGROTATEDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' scripts/systemd/spoold@.service \
	    > $(DESTDIR)$(SYSTEMDUNITDIR)/spoold@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/spoold@.service
	install -m 0644 scripts/logrotate/ckspool $(DESTDIR)$(LOGROTATEDIR)
	if [ -n "$(PYTHONDIR)" ]; then \
	    install -d $(DESTDIR)$(PYTHONDIR) && \
	    install -m 0644 python/ckspool.py $(DESTDIR)$(PYTHONDIR); \
	fi

print-pythondir:
	@echo $(PYTHONDIR)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS)))
	for m in $(MANS); do \
	    rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/spoold@.service \
	    $(DESTDIR)$(LOGROTATEDIR)/ckspool
	if [ -n "$(PYTHONDIR)" ]; then \
	    rm -f $(DESTDIR)$(PYTHONDIR)/ckspool.py \
		$(DESTDIR)$(PYTHONDIR)/__pycache__/ckspool.*.pyc; \
	fi

clean:
	rm -rf bin build

.PHONY: all deps test-deps unit integration check demo clean bench bench-deps \
	fuzz fuzzers install uninstall print-pythondir
.SECONDARY:
