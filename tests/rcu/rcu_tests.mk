# The lead's rcu tests: each built once per flavor.
RCU_TEST_LIBS = $(RCU_LIB) $(JEMALLOC_LIBS)

$(B)/tests/rcu/%_qsbr.o: tests/rcu/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRCU_FLAVOR_QSBR -c $< -o $@
$(B)/tests/rcu/%_memb.o: tests/rcu/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRCU_FLAVOR_MEMB -c $< -o $@

$(B)/tests/rcu/test_torture_%: $(B)/tests/rcu/test_torture_%.o $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(RCU_TEST_LIBS)
$(B)/tests/rcu/test_rcu_%: $(B)/tests/rcu/test_rcu_%.o $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(RCU_TEST_LIBS) $(call pc,--libs,cmocka)

TEST_BINS += $(B)/tests/rcu/test_rcu_qsbr $(B)/tests/rcu/test_rcu_memb \
	     $(B)/tests/rcu/test_torture_qsbr $(B)/tests/rcu/test_torture_memb
TEST_SCRIPTS += tests/rcu/memb_fallback.sh tests/rcu/broken_gp.sh
