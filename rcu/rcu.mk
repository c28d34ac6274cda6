# rcu/: librcu.a, depends on libc and pthreads only.
RCU_SRCS := rcu/rcu_core.c rcu/rcu_qsbr.c rcu/rcu_memb.c rcu/srcu.c rcu/rcu_debug.c
RCU_OBJS := $(RCU_SRCS:%.c=$(B)/%.o)
RCU_LIB := $(B)/librcu.a

$(RCU_LIB): $(RCU_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

PRODUCT_BINS += $(RCU_LIB)
include tests/rcu/rcu_tests.mk

# bench-srcu: SRCU figures (issue 3), run as part of bench-rcu.
BENCH_SRCU := $(B)/bench/bench_srcu
$(B)/bench/srcu/bench_srcu_urcu.o: bench/bench_srcu_urcu.c
	$(call need_pc,liburcu-memb)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call pc,--cflags,liburcu-memb) -c $< -o $@
$(B)/bench/srcu/bench_srcu.o: bench/bench_srcu.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BENCH_SRCU): $(B)/bench/srcu/bench_srcu.o $(B)/bench/srcu/bench_srcu_urcu.o $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,liburcu-memb) $(JEMALLOC_LIBS)
.PHONY: bench-srcu
bench-srcu:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_srcu
	build/release/bench/bench_srcu
bench-rcu: bench-srcu

# torture-loop: repeat the RCU torture tests until one fails (LOOPS, default 20).
.PHONY: torture-loop
torture-loop: $(B)/tests/rcu/test_torture_qsbr $(B)/tests/rcu/test_torture_memb \
	      $(B)/tests/rcu/test_srcu_qsbr $(B)/tests/rcu/test_srcu_memb
	@for i in $$(seq $${LOOPS:-20}); do \
	  for t in $^; do \
	    $$t > $(B)/torture-loop.log 2>&1 || { echo "run $$i: $$t failed:"; tail -20 $(B)/torture-loop.log; exit 1; }; \
	  done; echo "run $$i: ok"; \
	done
