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

$(B)/tests/rcu/test_srcu_%: $(B)/tests/rcu/test_srcu_%.o $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(RCU_TEST_LIBS) $(call pc,--libs,cmocka)

TEST_BINS += $(B)/tests/rcu/test_rcu_qsbr $(B)/tests/rcu/test_rcu_memb \
	     $(B)/tests/rcu/test_srcu_qsbr $(B)/tests/rcu/test_srcu_memb \
	     $(B)/tests/rcu/test_torture_qsbr $(B)/tests/rcu/test_torture_memb
TEST_SCRIPTS += tests/rcu/memb_fallback.sh tests/rcu/broken_gp.sh

# The checker's death tests (tests/rcu/checker.sh builds the DEBUG_RCU=1 variant).
$(B)/tests/rcu/test_checker: $(B)/tests/rcu/test_checker.o $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(RCU_TEST_LIBS)
TEST_SCRIPTS += tests/rcu/checker.sh
