# client/: rcukv-cli (command, line, interactive modes and the bench load
# generator).  Depends on hiredis, libedit and OpenSSL (TLS, client/tls.c);
# shares no code with server/ but the RESP library (resp/).

CLIENT_LIB_SRCS := client/reply.c client/format.c client/conn.c client/hist.c \
                   client/bench.c client/report.c client/tls.c
CLIENT_SRCS := $(CLIENT_LIB_SRCS) client/main.c
CLIENT_LIB_OBJS := $(CLIENT_LIB_SRCS:%.c=$(B)/%.o)
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(B)/%.o)
# Deferred (=): on a fresh machine 'make test' parses this before 'make deps'
# has installed the packages; the check below names a missing one.
CLIENT_CFLAGS = $(call pc,--cflags,hiredis) $(call pc,--cflags,openssl)
CLIENT_LIBS = $(call pc,--libs,hiredis) $(call pc,--libs,libedit) $(call pc,--libs,openssl) -lm
CLI := $(B)/rcukv-cli

$(CLIENT_OBJS) $(B)/tests/client/test_client.o: CFLAGS += $(CLIENT_CFLAGS)
$(CLIENT_OBJS) $(B)/tests/client/test_client.o: | client-pc-check
$(B)/tests/client/test_client.o: | client-test-pc-check

.PHONY: client-pc-check client-test-pc-check
client-pc-check:
	$(call need_pc,hiredis)
	$(call need_pc,libedit)
	$(call need_pc,openssl)
client-test-pc-check:
	$(call need_pc,cmocka)

$(CLI): $(CLIENT_OBJS) $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LIBS)

# Unit tests: histogram percentiles, HDR output, the reply scanner as the client drives it.
$(B)/tests/client/test_client: $(B)/tests/client/test_client.o $(CLIENT_LIB_OBJS) $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LIBS) $(call pc,--libs,cmocka)

PRODUCT_BINS += $(CLI)
TEST_BINS += $(B)/tests/client/test_client
TEST_SCRIPTS += tests/client/test_cli.sh tests/client/test_bench.sh tests/client/test_tls.sh
BENCH_SUBJECTS += client

# The scripts run $(B)/rcukv-cli (tests/run.sh passes B), so build it first;
# test_tls.sh also runs $(B)/rcukv-server (in ALL_BINS).
$(B)/tests/client/test_client: | $(CLI)

.PHONY: bench-client
bench-client: $(CLI)
	@RCUKV_CLI=$(abspath $(CLI)) bench/bench_client.sh
