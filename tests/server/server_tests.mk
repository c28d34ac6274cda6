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
		$(call pc,--libs,liblzf) $(call pc,--libs,$(SERVER_LUA_PC)) $(call pc,--libs,cmocka) $(JEMALLOC_LIBS) -lm -ldl
TEST_BINS += $(B)/tests/server/test_cmdrows

# tests/server/test_bits.sh: SUBSTR, LCS and the bitmap commands (issue 16):
# tests/server/cases_bits.txt against rcukv and redis-server 7.0.15, and
# concurrent SETBIT/BITFIELD on one key lose nothing.  Ports 7780-7799.
TEST_SCRIPTS += tests/server/test_bits.sh

# tests/server/test_hval: server/hval.c (the hash encoding) against a model
# under random edits, in both encodings.
$(B)/tests/server/test_hval: $(B)/tests/server/test_hval.o $(B)/server/hval.o $(B)/server/util.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(JEMALLOC_LIBS) -lm -lpthread
TEST_BINS += $(B)/tests/server/test_hval

# tests/server/test_zval: server/zval.c (the sorted set encoding) against a
# model under random edits, in both encodings, across the index threshold.
$(B)/tests/server/test_zval: $(B)/tests/server/test_zval.o $(B)/server/zval.o $(B)/server/hval.o $(B)/server/util.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(JEMALLOC_LIBS) -lm -lpthread
TEST_BINS += $(B)/tests/server/test_zval
# tests/server/test_lval: server/lval.c (the list value: versions sharing
# segments and chunks) against a model under random edits.
$(B)/tests/server/test_lval: $(B)/tests/server/test_lval.o $(B)/server/lval.o $(B)/server/util.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(JEMALLOC_LIBS) -lm -lpthread
TEST_BINS += $(B)/tests/server/test_lval
# the same with four chunks a segment: many segments, every merge path
$(B)/tests/server/test_lval_seg4.o: tests/server/test_lval.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLV_SEG_MAX=4 -c $< -o $@
$(B)/server/lval_seg4.o: server/lval.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLV_SEG_MAX=4 -c $< -o $@
$(B)/tests/server/test_lval_seg4: $(B)/tests/server/test_lval_seg4.o $(B)/server/lval_seg4.o $(B)/server/util.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(JEMALLOC_LIBS) -lm -lpthread
TEST_BINS += $(B)/tests/server/test_lval_seg4

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

# tests/server/test_hash.sh: the hash type (issue 17): cases_hash.txt against
# rcukv-server and redis-server, RDB dumps with hashes carried both ways, and
# test_hash_torture (hiredis): readers on one worker check every HGETALL
# (per-field checksums, a constant sum) while writers on the other HSET/HDEL
# fields past the hashtable encoding and back, with RCUKV_POISON_FREES=1 so
# a value freed too early reads as garbage.  Ports 7840-7859.
$(B)/tests/server/test_hash_torture.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_hash_torture: $(B)/tests/server/test_hash_torture.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
ALL_BINS += $(B)/tests/server/test_hash_torture
test-run build-tests: $(B)/tests/server/test_hash_torture
TEST_SCRIPTS += tests/server/test_hash.sh
# tests/server/broken_gp_hash.sh: test_hash_torture fails against an
# rcukv-server built with BROKEN_GP=1 (it builds one).  Ports 7860-7869.
TEST_SCRIPTS += tests/server/broken_gp_hash.sh

# tests/server/test_zset.sh: the sorted set type (issue 17): cases_zset.txt
# against rcukv-server and redis-server, RDB dumps carried both ways, and
# test_zset_torture (hiredis): readers on one worker check every ZRANGE
# (member checksums, strict order, a constant sum) while writers on the
# other move scores and members across the skiplist threshold and back, with
# RCUKV_POISON_FREES=1.  Ports 9200-9229.
$(B)/tests/server/test_zset_torture.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_zset_torture: $(B)/tests/server/test_zset_torture.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
ALL_BINS += $(B)/tests/server/test_zset_torture
test-run build-tests: $(B)/tests/server/test_zset_torture
TEST_SCRIPTS += tests/server/test_zset.sh
# tests/server/broken_gp_zset.sh: test_zset_torture fails against an
# rcukv-server built with BROKEN_GP=1 (it builds one).  Ports 9230-9239.
TEST_SCRIPTS += tests/server/broken_gp_zset.sh
# tests/server/test_list.sh: the list type (issue 17, lists): cases_list.txt
# against rcukv-server and redis-server, blocking pops with real clients
# (test_list_block.py), big lists, RDB both ways, and test_list_torture
# (hiredis): readers check that every LRANGE holds consecutive self-encoded
# elements while pipelined writers push/pop/trim both ends, with
# RCUKV_POISON_FREES=1.  Ports 9110-9139.
$(B)/tests/server/test_list_torture.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_list_torture: $(B)/tests/server/test_list_torture.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
ALL_BINS += $(B)/tests/server/test_list_torture
test-run build-tests: $(B)/tests/server/test_list_torture
TEST_SCRIPTS += tests/server/test_list.sh
# tests/server/broken_gp_list.sh: test_list_torture fails against an
# rcukv-server built with BROKEN_GP=1 (it builds one).  Ports 9140-9149.
TEST_SCRIPTS += tests/server/broken_gp_list.sh

# tests/server/test_tracking.sh: client-side caching (issue 16 item 4):
# cases_tracking.txt and redis-py's REDIRECT listener against rcukv and a
# redis-server.  Ports 7800-7819.
TEST_SCRIPTS += tests/server/test_tracking.sh

# tests/server/test_cases.sh: case files without a test of their own
# (cases_notify.txt: keyspace notifications) against rcukv and a
# redis-server.  Ports 7820-7839.
TEST_SCRIPTS += tests/server/test_cases.sh

# tests/server/test_admin.sh: SLOWLOG, LATENCY and the other admin commands
# (issue 16 item 5): tests/server/cases_admin.txt against rcukv and
# redis-server 7.0.15.  Ports 7780-7799.
TEST_SCRIPTS += tests/server/test_admin.sh

# tests/server/test_script.sh: Lua scripting: cases_script.txt, redis-py's
# register_script and r.lock() (test_script.py), scripted transfers against
# MGET readers, SCRIPT KILL and hostile scripts, against rcukv and a
# redis-server.  Ports 7900-7949.
TEST_SCRIPTS += tests/server/test_script.sh

# tests/server/test_command_info.sh: every command's COMMAND INFO (arity,
# flags, keys, ACL categories) against redis-server 7.0.15's (redis-py).
TEST_SCRIPTS += tests/server/test_command_info.sh

# tests/server/test_modules.sh: Redis 7.0 modules (issue 20): Redis 7.0.15's
# helloworld.c built at test time from Debian's source package
# (modules_fetch.sh; a skip when it cannot be had), cases_modules.txt against
# rcukv and a redis-server, enable-module-command, loadmodule, and the
# load/unload torture.  Ports 7960-7989.
TEST_SCRIPTS += tests/server/test_modules.sh
# tests/server/broken_module_unload.sh: the module torture fails against an
# rcukv-server built with BROKEN_MODULE_UNLOAD=1, for both unload schemes.
TEST_SCRIPTS += tests/server/broken_module_unload.sh

# tests/server/test_set.sh: the set type (issue 17, second type):
# cases_set.txt against rcukv-server and redis-server, and the replies Redis
# does not order (hashtable-encoded sets) compared as sorted multisets, RDB
# both ways with redis-server, maxmemory, and
# test_set_torture (hiredis): readers on one worker check every SMEMBERS
# (well-formed members, each with its twin) while writers on the other
# churn sets across the intset/hashtable threshold, with
# RCUKV_POISON_FREES=1.  Ports 9010-9049.
$(B)/tests/server/test_set_torture.o: CFLAGS += $(call pc,--cflags,hiredis)
$(B)/tests/server/test_set_torture: $(B)/tests/server/test_set_torture.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,hiredis) -lpthread
ALL_BINS += $(B)/tests/server/test_set_torture
test-run build-tests: $(B)/tests/server/test_set_torture
TEST_SCRIPTS += tests/server/test_set.sh
# tests/server/test_sort.sh: SORT and SORT_RO (issue 17 item 3):
# cases_sort.txt against rcukv-server and redis-server, SORT BY nosort of a
# hashtable set compared as a sorted multiset, big sorts against sort(1),
# and BLPOP woken by SORT ... STORE, on both.  Ports 9060-9089.
TEST_SCRIPTS += tests/server/test_sort.sh
# tests/server/broken_gp_set.sh: test_set_torture fails against an
# rcukv-server built with BROKEN_GP=1 (it builds one).  Ports 9050-9059.
TEST_SCRIPTS += tests/server/broken_gp_set.sh

# tests/server/test_sval: server/sval.c (the set encoding) against a model
# under random SADD/SREM edits across the intset limit, both encodings.
$(B)/tests/server/test_sval: $(B)/tests/server/test_sval.o $(B)/server/sval.o $(B)/server/hval.o $(B)/server/util.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(JEMALLOC_LIBS) -lm -lpthread
TEST_BINS += $(B)/tests/server/test_sval
