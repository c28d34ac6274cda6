# bench/: one runnable per subject; `make bench-<subject>` builds and runs one.
# Output format: ../shared/BENCHMARKS.md (BENCH/RATIO lines).  BENCH_QUICK=1
# shortens every timed section.  Benchmarks build in the release variant only
# and link their reference systems here, never into the product.

# --- bench-rcu: rcukv's RCU flavors against liburcu 0.13 (Debian liburcu-dev)
# One source, five objects (see the comment at the top of bench/bench_rcu.c).
BENCH_RCU := $(B)/bench/bench_rcu
BENCH_RCU_OBJS := $(B)/bench/rcu/driver.o \
	$(B)/bench/rcu/rcukv_qsbr.o $(B)/bench/rcu/rcukv_memb.o \
	$(B)/bench/rcu/urcu_qsbr.o $(B)/bench/rcu/urcu_memb.o
BENCH_RCU_URCU_CFLAGS = $(call pc,--cflags,liburcu-qsbr liburcu-memb)
BENCH_RCU_URCU_LIBS = $(call pc,--libs,liburcu-qsbr liburcu-memb)

$(B)/bench/rcu/driver.o: bench/bench_rcu.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DBENCH_DRIVER -c $< -o $@
# Static pattern rules: they apply to these objects only (a plain pattern rule
# would also offer to build the .d files through make's built-in %: %.o).
$(B)/bench/rcu/rcukv_qsbr.o $(B)/bench/rcu/rcukv_memb.o: $(B)/bench/rcu/rcukv_%.o: bench/bench_rcu.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DBENCH_SYS_RCUKV -DBENCH_FLAVOR_$(shell echo $* | tr a-z A-Z) -c $< -o $@
$(B)/bench/rcu/urcu_qsbr.o $(B)/bench/rcu/urcu_memb.o: $(B)/bench/rcu/urcu_%.o: bench/bench_rcu.c
	$(call need_pc,liburcu-qsbr)
	$(call need_pc,liburcu-memb)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BENCH_RCU_URCU_CFLAGS) -DBENCH_SYS_URCU \
		-DBENCH_FLAVOR_$(shell echo $* | tr a-z A-Z) -c $< -o $@
$(BENCH_RCU): $(BENCH_RCU_OBJS) $(RCU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(BENCH_RCU_OBJS) $(RCU_LIB) $(BENCH_RCU_URCU_LIBS) $(JEMALLOC_LIBS) -o $@

.PHONY: bench-rcu
bench-rcu:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_rcu
	build/release/bench/bench_rcu
BENCH_SUBJECTS += rcu

# --- bench-persistence: RDB snapshots, rcukv (no fork) vs redis-server 7 (fork):
# p99 of a 50%-write load during BGSAVE, peak RSS growth, save and load keys/s
# (issue 8).  BENCH_QUICK=1 for a short run.
.PHONY: bench-persistence
bench-persistence:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server build/release/rcukv-cli
	@bench/bench_persistence.sh build/release/rcukv-server
BENCH_SUBJECTS += persistence

# --- bench-memory: the cache tier against redis-server 7 (issue 7): bytes per
# key for 1M keys, RSS growth in a 30 s overwrite flood, zipf hit ratio with
# maxmemory at 10% of the key space (allkeys-lru, allkeys-lfu).
.PHONY: bench-memory
bench-memory:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server build/release/rcukv-cli
	@bench/bench_memory.sh build/release/rcukv-server
BENCH_SUBJECTS += memory

# --- bench-scaleout: redis-benchmark direct to a node and through twemproxy
# (nutcracker) to 1 and 3 nodes, rcukv-servers against redis-servers behind
# the same proxy configuration (issue 18).  BENCH_QUICK=1 for a short run.
.PHONY: bench-scaleout
bench-scaleout:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server
	@bench/bench_scaleout.sh build/release/rcukv-server
BENCH_SUBJECTS += scaleout

# --- bench-collections: redis-benchmark's default test list (hashes, sets,
# lists, sorted sets) at -P 1 and -P 16 and memory per element, rcukv against
# redis-server in one run (issue 17).  BENCH_QUICK=1 for a short run.
.PHONY: bench-collections
bench-collections:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server
	@bench/bench_collections.sh build/release/rcukv-server
BENCH_SUBJECTS += collections

# --- bench-modules: GET p99/p99.9 under redis-benchmark -P 16 while a module
# is unloaded and loaded 100 times, rcukv's RCU and freeze schemes against
# redis-server (issue 20).  BENCH_QUICK=1 for 20 cycles.
.PHONY: bench-modules
bench-modules:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server
	@bench/bench_modules.sh build/release/rcukv-server
BENCH_SUBJECTS += modules

# --- bench-replication: rcukv-server and redis-server as replicas of one
# redis-server master: full-sync time of 2M keys, offset lag under a SET
# load, catch-up time (issue 18).  BENCH_QUICK=1 for a short run.
.PHONY: bench-replication
bench-replication:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server
	@bench/bench_replication.sh build/release/rcukv-server
BENCH_SUBJECTS += replication

# --- bench-stats: the per-command cost of INFO commandstats / latencystats
# (two clock reads + the per-worker counters and histogram around an empty
# command; TSC vs CLOCK_MONOTONIC, latency-tracking yes/no) and INFO's merge.
$(B)/bench/bench_stats: $(B)/bench/bench_stats.o $(B)/server/stats.o $(B)/server/lathist.o \
		$(B)/server/util.o $(B)/server/log.o $(RESP_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lm
.PHONY: bench-stats
bench-stats:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_stats
	build/release/bench/bench_stats
BENCH_SUBJECTS += stats

# --- hiredis load generators (bench_net.c: connect, epoll, fixed-frame reader)
# bench-pubsub: 1 publisher, 50 subscribers, rcukv-server against redis-server 7
# (issue 16): deliveries/s and p99 delivery latency.  bench_multi drives the
# MULTI/EXEC line of bench-server (server/server.mk).
BENCH_NET_OBJS := $(B)/bench/bench_net.o $(B)/client/hist.o
$(B)/bench/bench_net.o $(B)/bench/bench_pubsub.o $(B)/bench/bench_multi.o: \
	CFLAGS += $(call pc,--cflags,hiredis)
$(B)/bench/bench_pubsub $(B)/bench/bench_multi: $(B)/bench/%: $(B)/bench/%.o $(BENCH_NET_OBJS)
	$(call need_pc,hiredis)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lm
.PHONY: bench-pubsub
bench-pubsub:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server \
		build/release/bench/bench_pubsub
	@bench/bench_pubsub.sh build/release/rcukv-server
BENCH_SUBJECTS += pubsub

# `make all` builds the benchmark programs that need nothing beyond the
# server's packages, so a change that breaks one fails the build, not a
# later `make bench-*` (bench_stats went unbuilt through several changes).
ALL_BINS += $(B)/bench/bench_stats $(B)/bench/bench_pubsub $(B)/bench/bench_multi

# --- bench-curves: cost curves against redis-server 7 in one run (issue 19
# item 3): GET/SET throughput and p99 against keys (1K..30M), value size
# (16 B..1 MiB) and connections (1..5000), p99 with 10,000 idle connections,
# bytes per key against keys; SVG plots in bench/results/curves/.  Not in
# BENCH_SUBJECTS: the full run takes longer than `make bench`'s five minutes
# a subject (CURVES_QUICK=1 for a short look, CURVES_REPEATS=N).
.PHONY: bench-curves
bench-curves:
	@$(MAKE) --no-print-directory VARIANT=release build/release/rcukv-server
	@bench/bench_curves.sh build/release/rcukv-server
