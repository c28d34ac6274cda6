# rcukv: one top-level Makefile, no generator.  Each module adds its sources,
# binaries and tests from its own fragment (<module>/<module>.mk), so modules
# can grow without touching this file.
#
#   make            build everything (release variant, build/release/)
#   make test       install missing packages, build, run every test suite
#   make asan       the same suites under AddressSanitizer + UBSan (build/asan/)
#   make tsan       the same suites under ThreadSanitizer (build/tsan/)
#   make torture    every suite with torture tests running longer (TORTURE_SECONDS=60)
#   make torture-loop  repeat the RCU torture tests until one fails (LOOPS=20)
#   make run        install what running needs, build the product only (server,
#                   CLI, library: no cmocka, no test programs), start rcukv-server
#                   with conf/rcukv.conf (RUN_ARGS="--port 6390" adds options)
#   make product    build the product only
#   make fresh-check  make run, then make test, in a throwaway Debian 12 root
#   make bench      every benchmark; make bench-<subject> for one
#   make deps       install missing Debian packages (root) or print the command

VARIANT ?= release
B := build/$(VARIANT)

CC ?= gcc
NPROC := $(shell nproc 2>/dev/null || echo 2)
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wundef
CFLAGS_BASE := -std=c11 -O2 -g -D_GNU_SOURCE -pthread -MMD -MP -I. $(WARN)
LDFLAGS_BASE := -pthread

ifeq ($(VARIANT),asan)
  # -fno-sanitize=null: GCC 12 miscompiles UBSan's null check of a TLS
  # variable's address (it branches on stale flags after an atomic), and ASan
  # reports a null dereference as SEGV anyway.
  SAN := -fsanitize=address,undefined -fno-sanitize=null -fno-sanitize-recover=all \
         -fno-omit-frame-pointer
  USE_JEMALLOC := 0
else ifeq ($(VARIANT),tsan)
  SAN := -fsanitize=thread -fno-omit-frame-pointer -DRCU_TSAN=1
  USE_JEMALLOC := 0
else
  SAN :=
  USE_JEMALLOC ?= 1
endif
ifeq ($(BROKEN_GP),1)
  # Deliberately broken grace periods: the torture tests must fail with this.
  SAN += -DRCU_BROKEN_GP=1
  B := build/$(VARIANT)-brokengp
endif
ifeq ($(BROKEN_MODULE_UNLOAD),1)
  # Module unload that skips its grace period, drain and barrier (scheme
  # rcu) or its freeze (scheme freeze): the module torture must fail.
  SAN += -DRCUKV_BROKEN_MODULE_UNLOAD=1 -DRCUKV_BROKEN_MODULE_DRAIN=1
  B := build/$(VARIANT)-brokenunload
endif
ifeq ($(DEBUG_RCU),1)
  SAN += -DRCU_DEBUG=1
  B := build/$(VARIANT)-debug
endif

CFLAGS := $(CFLAGS_BASE) $(SAN) $(EXTRA_CFLAGS)
LDFLAGS := $(LDFLAGS_BASE) $(SAN) $(EXTRA_LDFLAGS)

# pkg-config, with a sentence naming what is missing.
pc = $(shell pkg-config $(1) $(2) 2>/dev/null)
define need_pc
$(if $(shell pkg-config --exists $(1) && echo ok),,$(error missing pkg-config package '$(1)': run 'make deps' (or scripts/deps.sh test) to install it))
endef

ifeq ($(USE_JEMALLOC),1)
  JEMALLOC_LIBS = $(call pc,--libs,jemalloc)
else
  JEMALLOC_LIBS =
endif

# `make test`, `make run` and the other installing goals install missing
# packages before the module fragments are read, because the fragments ask
# pkg-config for flags as they are read.  (The recipes' `deps` step then finds
# nothing to do.)
INSTALL_GOALS := test run asan tsan torture deps
ifneq ($(filter $(INSTALL_GOALS),$(MAKECMDGOALS)),)
  ifeq ($(MAKELEVEL),0)
    DEPS_KIND := $(if $(filter-out run,$(filter $(INSTALL_GOALS),$(MAKECMDGOALS))),test,build)
    DEPS_STATUS := $(shell scripts/deps.sh $(DEPS_KIND) >&2; echo $$?)
    ifneq ($(DEPS_STATUS),0)
      $(error cannot continue without the packages named above)
    endif
  endif
endif

# Filled in by the module fragments.  PRODUCT_BINS is what `make run` and
# `make install` need (server, CLI, libraries); ALL_BINS adds the programs that
# need the test packages (cmocka).
PRODUCT_BINS :=
ALL_BINS :=
TEST_BINS :=        # binaries that print 'N passed, M failed'
TEST_SCRIPTS :=     # scripts run by tests/run.sh after the binaries
BENCH_SUBJECTS :=

.PHONY: all product deps test test-run build-tests asan tsan torture run bench clean install fresh-check
all:

include rcu/rcu.mk
include resp/resp.mk
-include hashtable/hashtable.mk
-include server/server.mk
-include server/rdb.mk
-include client/client.mk
-include tests/tests.mk
-include bench/bench.mk
-include tests/soak/soak.mk
-include tests/fuzz/fuzz.mk

product: $(PRODUCT_BINS)
all: $(PRODUCT_BINS) $(ALL_BINS)

deps:
	@scripts/deps.sh test

# test: install, build, run.  test-run skips the package check (used by asan/tsan).
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) build-tests
	@$(MAKE) --no-print-directory test-run

test-run: $(TEST_BINS)
	@VARIANT=$(VARIANT) B=$(B) tests/run.sh $(TEST_BINS) $(TEST_SCRIPTS)

# ASan keeps freed memory in a 256 MB quarantine and returns it to the OS
# late, so the soak test's "RSS back near its baseline" check cannot hold with
# the defaults; a small quarantine released promptly keeps use-after-free
# detection for recent frees.  An ASAN_OPTIONS in the environment wins.
ASAN_TEST_OPTIONS := quarantine_size_mb=4:thread_local_quarantine_size_kb=64:allocator_release_to_os_interval_ms=50
asan: deps
	@$(MAKE) --no-print-directory VARIANT=asan -j$(NPROC) build-tests
	@ASAN_OPTIONS="$${ASAN_OPTIONS:-$(ASAN_TEST_OPTIONS)}" $(MAKE) --no-print-directory VARIANT=asan test-run

tsan: deps
	@$(MAKE) --no-print-directory VARIANT=tsan -j$(NPROC) build-tests
	@$(MAKE) --no-print-directory VARIANT=tsan test-run

build-tests: $(TEST_BINS)

torture: deps
	@$(MAKE) --no-print-directory TORTURE_SECONDS=$${TORTURE_SECONDS:-60} test-run

# The server runs in the foreground (exec: make's child is the server), so
# Ctrl-C reaches it with the rest of the terminal's process group: it shuts
# down as on SIGINT (Redis's log lines, exit 0) and make waits for it.
RUN_ARGS ?=
run:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory -j$(NPROC) product
	@exec $(B)/rcukv-server conf/rcukv.conf $(RUN_ARGS)

# A throwaway Debian 12 root (debootstrap --variant=minbase), a fresh clone of
# this repository's HEAD: `make run` must answer PING and SHUTDOWN before
# `make test` has ever run, then `make test` runs in the same root.
fresh-check:
	@scripts/fresh-check.sh

bench: $(addprefix bench-,$(BENCH_SUBJECTS))

clean:
	rm -rf build

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

-include $(shell find build/$(VARIANT) -name '*.d' 2>/dev/null)
