# server/: rcukv-server, the Redis-protocol daemon (issue 5).
# Links the QSBR build of the hash table ($(B)/libht_qsbr.a), librcu, libevent
# and jemalloc.  Also defines `make bench-server`.
$(call need_pc,libevent)
$(call need_pc,openssl)

SERVER_SRCS := server/main.c server/config.c server/log.c server/util.c server/reply.c server/request.c \
               server/net.c server/cmd.c server/info.c server/tls.c server/persist.c \
               server/stats.c server/lathist.c server/db.c server/evict.c server/mem.c \
               server/cmd_docs.c server/cmd_string.c server/cmd_bit.c server/bitops.c server/cmd_keys.c server/cmd_db.c server/cmd_expire.c \
               server/cmd_conn.c server/cmd_server.c server/client.c server/cmd_client.c server/cmd_object.c server/cmd_dump.c server/multi.c server/cmd_multi.c server/tracking.c server/cmd_tracking.c server/notify.c server/conn.c \
               server/pubsub.c server/cmd_pubsub.c \
               server/server.c
# The keyspace is the QSBR build of the hash table (hashtable/hashtable.mk).
SERVER_HT_LIB := $(HT_QSBR_LIB)
SERVER_OBJS := $(SERVER_SRCS:%.c=$(B)/%.o)

$(SERVER_OBJS): CFLAGS += $(call pc,--cflags,libevent) $(call pc,--cflags,openssl) -DSRV_JEMALLOC=$(USE_JEMALLOC)

# server/rdb.mk (read after this file) builds $(B)/server/rdb.o and names liblzf.
$(B)/rcukv-server: $(SERVER_OBJS) $(B)/server/rdb.o $(SERVER_HT_LIB) $(RCU_LIB) $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJS) $(B)/server/rdb.o $(SERVER_HT_LIB) $(RCU_LIB) $(RESP_LIB) \
		$(call pc,--libs,libevent) $(call pc,--libs,openssl) $(call pc,--libs,liblzf) \
		$(JEMALLOC_LIBS) -lm

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
