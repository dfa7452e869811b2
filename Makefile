# fastfutex: per-process futex hashing for Linux 6.12 LTS.
# The product is patches/; this Makefile builds, boots and measures it.

TREE    ?= build/linux
SUITES  ?= futex-selftests,fastfutex,attached,reliability
QUICK   ?= 0
# make bench PARTS=icount,rtlat: only some parts (wall,2014,icount,rtlat,piinv,perf,drain,snitch; cyclic only when named)
PARTS   ?=
# make series-check PATCHES=3-14: only some patches
PATCHES ?=
# make matrix ROWS=up,arm64: only some rows (default all; scripts/matrix.sh)
ROWS    ?=

.PHONY: help deps tree export test test-rt coverage run perf check series-check matrix bench trace clean

help:
	@echo "make deps     install the Debian packages the harness needs"
	@echo "make tree     unpack linux-source-6.12 into $(TREE) and apply patches/"
	@echo "make export   regenerate patches/ from $(TREE)'s commits since 'base'"
	@echo "make test     debug kernel (lockdep, KASAN): all suites + harness self-test"
	@echo "make test-rt  the same on PREEMPT_RT"
	@echo "make coverage gcov of kernel/futex/ during make test's suites (results/coverage/)"
	@echo "make run      boot the patched kernel to an interactive shell (perf-tree inside after 'make perf')"
	@echo "make perf     build the tree's perf (static, perf bench with -b, --prealloc, --node)"
	@echo "make check    checkpatch --strict on the series, shellcheck on scripts"
	@echo "make series-check  build and boot every patch (PATCHES=FIRST-LAST for some)"
	@echo "make matrix   build and test many configs: UP, arm64, compat32, no jump labels, preemption"
	@echo "              models, series options off, Debian config, W=1, sparse, clang (ROWS=up,arm64 for some)"
	@echo "make bench    vanilla vs fastfutex benchmark (QUICK=1: CI subset; PARTS=wall,2014,icount,rtlat,piinv,perf,drain,snitch,cyclic)"
	@echo "make trace    after make bench: single-step every futex op under gdb, per-function instruction diff"

deps:
	scripts/deps.sh

$(TREE)/Makefile:
	scripts/get-tree.sh $(TREE)

tree: deps $(TREE)/Makefile

export:
	scripts/export.sh $(TREE)

test: tree
	scripts/test.sh $(TREE) debug $(SUITES)

test-rt: tree
	scripts/test.sh $(TREE) rt $(SUITES) --no-selftest

coverage: tree
	scripts/coverage.sh $(TREE) $(SUITES)

PERF_TREE = build/out/$(notdir $(TREE))-perf/perf

run: tree
	scripts/build-kernel.sh $(TREE) build/out/$(notdir $(TREE))-base configs/base.config >/dev/null
	scripts/pack-guest.sh $(TREE) build/guest/run build/guest/run.cpio.gz --tools \
		$(if $(wildcard $(PERF_TREE)),--tree-perf $(PERF_TREE))
	scripts/boot.sh build/out/$(notdir $(TREE))-base/arch/x86/boot/bzImage build/guest/run.cpio.gz shell -

perf: tree
	scripts/build-perf.sh $(TREE) $(dir $(PERF_TREE))

check: deps $(TREE)/Makefile
	scripts/check.sh $(TREE)

series-check: tree
	scripts/series-check.sh $(TREE) $(PATCHES)

matrix: tree
	scripts/deps.sh --matrix
	scripts/matrix.sh $(TREE) $(ROWS)

bench: tree
	scripts/bench.sh $(TREE) $(QUICK) $(PARTS)

VBENCH = build/out/vanilla-bench
PBENCH = build/out/$(notdir $(TREE))-bench
BZ     = arch/x86/boot/bzImage

trace: tree
	@test -f $(VBENCH)/vmlinux -a -f $(PBENCH)/vmlinux || \
		{ echo "trace: run make bench first (needs $(VBENCH) and $(PBENCH))" >&2; exit 1; }
	mkdir -p results/trace
	scripts/trace-path.sh build/vanilla $(VBENCH)/$(BZ) results/trace/vanilla.trace
	scripts/trace-path.sh $(TREE) $(PBENCH)/$(BZ) results/trace/patched.trace
	python3 scripts/trace-report.py $(VBENCH)/vmlinux results/trace/vanilla.trace \
		$(PBENCH)/vmlinux results/trace/patched.trace | tee results/trace/report.txt

clean:
	rm -rf build/out build/guest results
