# tests/: one block per test binary.  Every binary prints 'N passed, M failed'
# (the C tests through tests/check.h, with ', K skipped').
#
# Tests that touch RCU run once per flavor: $(call rcu_flavor_test,<src>,<flavor>)
# compiles <src>.c with -DRCU_FLAVOR_<FLAVOR> into $(B)/<flavor>/<src>.o (so the
# two builds never share an object) and links $(B)/<src>_<flavor> against librcu.a.

define rcu_flavor_test
$(B)/$(2)/$(1).o: $(1).c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -DRCU_FLAVOR_$(shell echo $(2) | tr a-z A-Z) -c $$< -o $$@
$(B)/$(1)_$(2): $(B)/$(2)/$(1).o $$(RCU_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ -o $$@
TEST_BINS += $(B)/$(1)_$(2)
endef

# --- tests/rcu/test_rculist.c: rculist.h unit tests and list/hlist torture --
$(eval $(call rcu_flavor_test,tests/rcu/test_rculist,qsbr))
$(eval $(call rcu_flavor_test,tests/rcu/test_rculist,memb))

# --- examples/: one small program per RCU API family, built and run by make test.
# $(call rcu_example,<name>) builds $(B)/examples/<name> from examples/<name>.c
# (the example picks its own flavor).
define rcu_example
$(B)/examples/$(1): $(B)/examples/$(1).o $$(RCU_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ -o $$@
TEST_BINS += $(B)/examples/$(1)
endef
$(eval $(call rcu_example,publish))
$(eval $(call rcu_example,reclaim))
$(eval $(call rcu_example,srcu_scan))

# --- tests/lint.sh: half-checked shell checks, files named in comments that do not exist.
TEST_SCRIPTS += tests/lint.sh

# --- tests/bench/test_curves_plot.sh: make bench-curves' SVG plot generator
# (bench/curves_plot.py) on a tiny fake points file; no server, under a second.
TEST_SCRIPTS += tests/bench/test_curves_plot.sh

# --- tests/cluster: twemproxy (nutcracker) in front of three rcukv-servers (issue 18).
TEST_SCRIPTS += tests/cluster/test_twemproxy.sh
# rcukv-server as a replica of a redis-server master (issue 18).
TEST_SCRIPTS += tests/cluster/test_replication.sh
# ... whose expiry follows its master's DELs, as a Redis replica's does.
TEST_SCRIPTS += tests/cluster/test_repl_expire.sh
# rcukv-server as a master of redis-server and rcukv replicas (issue 18).
TEST_SCRIPTS += tests/cluster/test_master.sh
# ... and its full sync under load fails against a BROKEN_GP=1 build.
TEST_SCRIPTS += tests/cluster/broken_gp_master.sh
# Sentinel (redis-server --sentinel) fails an rcukv master over to an rcukv
# replica while a redis-py client writes on (issue 18 item 4).
TEST_SCRIPTS += tests/cluster/test_sentinel.sh
