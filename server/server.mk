# server/: rcukv-server, the Redis-protocol daemon (issue 5).
# Links the QSBR build of the hash table ($(B)/libht_qsbr.a), librcu, libevent
# and jemalloc.  Also defines `make bench-server`.
$(call need_pc,libevent)
$(call need_pc,openssl)
$(call need_pc,lua5.1)
$(call need_pc,lua5.1-bitop)
$(call need_pc,lua5.1-cjson)
# Lua 5.1 for EVAL (server/script.c), with Redis's bit and cjson libraries.
SERVER_LUA_PC := lua5.1 lua5.1-bitop lua5.1-cjson

SERVER_SRCS := server/main.c server/config.c server/config_rewrite.c server/log.c server/util.c server/reply.c server/request.c \
               server/net.c server/cmd.c server/keyspecs.c server/info.c server/tls.c server/persist.c \
               server/stats.c server/lathist.c server/db.c server/evict.c server/mem.c \
               server/cmd_docs.c server/cmd_string.c server/cmd_bit.c server/cmd_hash.c server/hval.c server/cmd_zset.c server/zval.c server/cmd_list.c server/lval.c server/block.c server/bitops.c server/cmd_keys.c server/cmd_db.c server/cmd_expire.c \
               server/cmd_conn.c server/cmd_server.c server/client.c server/cmd_client.c server/cmd_object.c server/cmd_dump.c server/multi.c server/cmd_multi.c server/tracking.c server/cmd_tracking.c server/notify.c server/conn.c \
               server/pubsub.c server/cmd_pubsub.c server/script.c server/cmd_script.c \
               server/slowlog.c server/latency.c server/monitor.c server/pause.c server/cmd_admin.c server/cmd_debug.c \
               server/repl.c server/cmd_repl.c server/replm.c server/propagate.c \
               server/module.c server/module_api.c server/module_dict.c server/module_type.c server/module_keys.c server/module_block.c \
               server/server.c
# Sets (issue 17, second type): docs/types.md "Sets".
SERVER_SRCS += server/cmd_set.c server/sval.c server/db_set.c
SERVER_SRCS += server/cmd_sort.c
# The keyspace is the QSBR build of the hash table (hashtable/hashtable.mk).
SERVER_HT_LIB := $(HT_QSBR_LIB)
SERVER_OBJS := $(SERVER_SRCS:%.c=$(B)/%.o)

$(SERVER_OBJS): CFLAGS += $(call pc,--cflags,libevent) $(call pc,--cflags,openssl) $(call pc,--cflags,$(SERVER_LUA_PC)) -DSRV_JEMALLOC=$(USE_JEMALLOC)

# server/rdb.mk (read after this file) builds $(B)/server/rdb.o and names liblzf.
$(B)/rcukv-server: $(SERVER_OBJS) $(B)/server/rdb.o $(SERVER_HT_LIB) $(RCU_LIB) $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJS) $(B)/server/rdb.o $(SERVER_HT_LIB) $(RCU_LIB) $(RESP_LIB) \
		$(call pc,--libs,libevent) $(call pc,--libs,openssl) $(call pc,--libs,liblzf) \
		$(call pc,--libs,$(SERVER_LUA_PC)) $(JEMALLOC_LIBS) -lm -ldl

PRODUCT_BINS += $(B)/rcukv-server

-include tests/server/server_tests.mk

# make bench-server: redis-benchmark (and bench/bench_multi for MULTI/EXEC)
# against rcukv-server and redis-server 7
# (default and io-threads 2), alternating; BENCH_QUICK=1 for a short run.
.PHONY: bench-server
bench-server: $(B)/rcukv-server $(B)/bench/bench_multi
	@bench/bench_server.sh $(B)/rcukv-server
BENCH_SUBJECTS += server

# make bench-security: TLS GET -P 16 throughput, rcukv TLS vs rcukv plain TCP
# vs redis-server 7 TLS (issue 9); BENCH_QUICK=1 for a short run.
.PHONY: bench-security
bench-security: $(B)/rcukv-server
	@bench/bench_security.sh $(B)/rcukv-server
BENCH_SUBJECTS += security
