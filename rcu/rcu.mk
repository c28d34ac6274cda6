# rcu/: librcu.a, depends on libc and pthreads only.
RCU_SRCS := rcu/rcu_core.c rcu/rcu_qsbr.c rcu/rcu_memb.c rcu/srcu.c rcu/rcu_debug.c
RCU_OBJS := $(RCU_SRCS:%.c=$(B)/%.o)
RCU_LIB := $(B)/librcu.a

$(RCU_LIB): $(RCU_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ALL_BINS += $(RCU_LIB)
include tests/rcu/rcu_tests.mk
