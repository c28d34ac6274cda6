# tests/server/: integration tests of rcukv-server (issue 5).  The binary
# starts $(B)/rcukv-server itself on a free loopback port (7200-7299); pass
# --host/--port to point it at a running server (e.g. a real redis-server).
$(B)/tests/server/test_server: $(B)/tests/server/test_server.o $(RESP_LIB) | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^
TEST_BINS += $(B)/tests/server/test_server
TEST_SCRIPTS += tests/server/test_security.sh
TEST_SCRIPTS += tests/server/test_tls.sh
# Start-up refusals (port in use, configuration errors) against redis-server's.
TEST_SCRIPTS += tests/server/test_startup.sh

# tests/server/test_persist: RDB persistence end to end (issue 8): SAVE/BGSAVE,
# save points, shutdown saves, round trips through rcukv and redis-server 7,
# redis-check-rdb, the sweep test, MSET pairs, 50 writers, kill -9, bad dumps,
# disk full (RLIMIT_FSIZE and a 1 MiB tmpfs), MISCONF, serving -LOADING while
# a 500,000-key dump loads (TEST_LOADING_KEYS).  Ports 7500-7599.
# TEST_PERSIST_SECONDS (default 1) lengthens each load phase.
$(B)/tests/server/test_persist.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_persist: $(B)/tests/server/test_persist.o $(B)/server/rdb.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) $(call pc,--libs,liblzf)
TEST_BINS += $(B)/tests/server/test_persist

# tests/server/test_cache.sh: the cache tier (issue 7): expiry, maxmemory and
# the eviction policies, OOM, a write flood's RCU backlog.  Ports 7400-7449.
TEST_SCRIPTS += tests/server/test_cache.sh

# tests/server/test_dump.sh: DUMP/RESTORE/WAIT (issue 16): cases_dump.txt
# against rcukv-server and redis-server, payloads carried both ways between
# them (values from empty to 1 MB, TTLs).  Ports 7760-7789.
TEST_SCRIPTS += tests/server/test_dump.sh

# tests/server/test_db.sh: the 16 databases (issue 16 item 1): cases_db.txt
# against rcukv-server and redis-server, RDB dumps of several databases
# carried both ways, `databases`, SWAPDB under writers.  Ports 7800-7829.
TEST_SCRIPTS += tests/server/test_db.sh

# tests/server/test_lathist: the INFO latencystats histogram (server/lathist.c):
# bucket bounds, the 1/128 error bound, percentiles as redis-server 7.0 prints them.
$(B)/tests/server/test_lathist: $(B)/tests/server/test_lathist.o $(B)/server/lathist.o
	$(CC) $(LDFLAGS) -o $@ $^
TEST_BINS += $(B)/tests/server/test_lathist

# tests/server/test_stats.sh: INFO commandstats / errorstats / latencystats
# (exact counts, RESETSTAT, options, concurrent clients).  Ports 7600-7648;
# STATS_TEST_PORT=P runs it against any server (a redis-server 7.0 passes).
TEST_SCRIPTS += tests/server/test_stats.sh

# tests/server/test_valgrind.sh: traffic then SHUTDOWN under valgrind's
# memcheck leaks nothing (issue 5); release build only.  Ports 7700-7729.
TEST_SCRIPTS += tests/server/test_valgrind.sh

# tests/server/test_cmdrows: the start-up self-check of server/commands.def
# (cmd_rows_check): real rows pass, spoiled rows are refused by name, a
# malformed table stops start-up with exit 1.  Links the server's objects;
# main.o with its main() made local, so the test's own main() runs.
$(B)/tests/server/test_cmdrows.o: CFLAGS += $(call pc,--cflags,cmocka)
$(B)/tests/server/main_nomain.o: $(B)/server/main.o
	objcopy --localize-symbol=main $< $@
$(B)/tests/server/test_cmdrows: $(B)/tests/server/test_cmdrows.o $(B)/tests/server/main_nomain.o \
		$(filter-out $(B)/server/main.o,$(SERVER_OBJS)) $(B)/server/rdb.o $(SERVER_HT_LIB) $(RCU_LIB) $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,libevent) $(call pc,--libs,openssl) \
		$(call pc,--libs,liblzf) $(call pc,--libs,cmocka) $(JEMALLOC_LIBS) -lm
TEST_BINS += $(B)/tests/server/test_cmdrows

# tests/server/test_bits.sh: SUBSTR, LCS and the bitmap commands (issue 16):
# tests/server/cases_bits.txt against rcukv and redis-server 7.0.15, and
# concurrent SETBIT/BITFIELD on one key lose nothing.  Ports 7780-7799.
TEST_SCRIPTS += tests/server/test_bits.sh

# tests/server/test_bitops: server/bitops.c (popcount, first set/clear bit,
# ranges, BITOP bytes, BITFIELD fields and overflow) against bit-by-bit
# references.
$(B)/tests/server/test_bitops: $(B)/tests/server/test_bitops.o $(B)/server/bitops.o
	$(CC) $(LDFLAGS) -o $@ $^
TEST_BINS += $(B)/tests/server/test_bitops

# tests/server/test_pubsub: pub/sub across clients and both workers, with
# hiredis (issue 16 item 3): fan-out, per-publisher order, counts, glob
# patterns, UNSUBSCRIBE of all, RESP3 pushes, the pubsub output limit on a
# stuck subscriber, subscribe/close churn.  Ports 7780-7799.
# tests/server/test_pubsub.sh replays cases_pubsub.txt against rcukv and a
# redis-server, runs this binary against both, and the redis-py check.
$(B)/tests/server/test_pubsub.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_pubsub: $(B)/tests/server/test_pubsub.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
TEST_BINS += $(B)/tests/server/test_pubsub
TEST_SCRIPTS += tests/server/test_pubsub.sh

# tests/server/test_multi: MULTI/EXEC atomic for readers on every worker and
# WATCH losing no update, under transfers (issue 16 item 2), with hiredis;
# tests/server/test_multi.sh runs it against rcukv and a redis-server, with
# cases_multi.txt and redis-py (test_multi.py).  Ports 7740-7759.
$(B)/tests/server/test_multi.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_multi: $(B)/tests/server/test_multi.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
ALL_BINS += $(B)/tests/server/test_multi
test-run build-tests: $(B)/tests/server/test_multi
TEST_SCRIPTS += tests/server/test_multi.sh

# tests/server/test_tracking.sh: client-side caching (issue 16 item 4):
# cases_tracking.txt and redis-py's REDIRECT listener against rcukv and a
# redis-server.  Ports 7800-7819.
TEST_SCRIPTS += tests/server/test_tracking.sh

# tests/server/test_cases.sh: case files without a test of their own
# (cases_notify.txt: keyspace notifications) against rcukv and a
# redis-server.  Ports 7820-7839.
TEST_SCRIPTS += tests/server/test_cases.sh
