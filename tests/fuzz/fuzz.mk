# tests/fuzz/: libFuzzer harnesses for rcukv-server (issue 9, point 5).
#
#   make fuzz            run each harness for FUZZ_SECONDS (default 60) on its
#                        corpus; prints executions, coverage and crashes
#   make fuzz-build      build build/fuzz/fuzz_resp and build/fuzz/fuzz_cmd
#   tests/fuzz/fuzz_short.sh   ~10 s per harness plus every regression input
#                        (registered in TEST_SCRIPTS; skips under asan/tsan)
#
# The harnesses are built with clang (-fsanitize=fuzzer,address,undefined)
# into build/fuzz/, whatever VARIANT is: the server's sources are compiled
# again here (not server/main.c and net.c: no sockets, no libevent), never
# the objects of $(B).
#   fuzz_resp  the request parser (server/request.c) fed by the connection engine
#              (server/conn.c, on an in-memory transport), whole and in
#              fuzzer-chosen pieces; the outcomes must agree
#   fuzz_cmd   parse + execute against a real table (server/cmd.c, db.c, ...);
#              every reply must be exactly one well-formed RESP reply
# See tests/fuzz/README for the input format and docs/fuzzing.md for findings.

FUZZ_CC ?= clang
FUZZ_B := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_COV := -fsanitize=fuzzer-no-link
FUZZ_CFLAGS_BASE := -std=c11 -O1 -g -D_GNU_SOURCE -pthread -MMD -MP -I. \
		    -DSRV_JEMALLOC=0 -DSRV_FUZZ=1 $(call pc,--cflags,liblzf)
# Other people's sources: their warnings are checked by gcc in the normal
# build; clang's extra ones must not break the fuzz build.
FUZZ_CFLAGS_EXT := $(FUZZ_CFLAGS_BASE) -w
# The harnesses: the tree's warning set, as errors.
FUZZ_CFLAGS_OWN := $(FUZZ_CFLAGS_BASE) $(WARN) $(call pc,--cflags,hiredis)

FUZZ_RCU_OBJS := $(RCU_SRCS:%.c=$(FUZZ_B)/obj/%.o)
FUZZ_RESPLIB_OBJS := $(RESP_SRCS:%.c=$(FUZZ_B)/obj/%.o)
FUZZ_HT_OBJS := $(FUZZ_B)/obj/hashtable/ht_qsbr.o
FUZZ_SRV_NAMES := server config config_rewrite log util reply request conn client cmd keyspecs cmd_docs cmd_string cmd_bit cmd_hash hval cmd_zset zval cmd_list lval block bitops cmd_keys cmd_db cmd_expire cmd_conn cmd_server cmd_client cmd_object cmd_dump cmd_multi cmd_tracking cmd_pubsub cmd_admin cmd_debug cmd_repl repl replm propagate slowlog latency monitor pause pubsub tracking notify info db multi evict mem persist rdb stats lathist script cmd_script module module_api module_dict module_type module_keys module_block
FUZZ_SRV_NAMES += cmd_set sval db_set
FUZZ_SRV_NAMES += cmd_sort
FUZZ_SRV_OBJS := $(FUZZ_SRV_NAMES:%=$(FUZZ_B)/obj/server/%.o)
# fuzz_resp needs the parser, the engine and what they call; net.c is in
# neither harness (fuzz_common.c is their event loop, g_srv is its own);
# the harness runs the commands it parses itself (record_command()).
FUZZ_RESP_OBJS := $(addprefix $(FUZZ_B)/obj/server/,server.o config.o log.o util.o reply.o request.o conn.o client.o pubsub.o monitor.o pause.o stats.o \
		  lathist.o block.o) \
		  $(FUZZ_RCU_OBJS) $(FUZZ_RESPLIB_OBJS)

$(FUZZ_B)/obj/rcu/%.o: rcu/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS_EXT) $(FUZZ_SAN) -c $< -o $@
$(FUZZ_B)/obj/resp/%.o: resp/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS_EXT) $(FUZZ_SAN) $(FUZZ_COV) -c $< -o $@
$(FUZZ_B)/obj/hashtable/ht_qsbr.o: hashtable/ht.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS_EXT) $(FUZZ_SAN) $(FUZZ_COV) -DRCU_FLAVOR_QSBR -c $< -o $@
$(FUZZ_B)/obj/server/%.o: server/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS_EXT) $(call pc,--cflags,$(SERVER_LUA_PC)) $(FUZZ_SAN) $(FUZZ_COV) -c $< -o $@
$(FUZZ_B)/obj/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz_common.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS_OWN) $(FUZZ_SAN) $(FUZZ_COV) -c $< -o $@

$(FUZZ_B)/fuzz_resp: $(FUZZ_B)/obj/tests/fuzz/fuzz_resp.o $(FUZZ_B)/obj/tests/fuzz/fuzz_common.o \
		     $(FUZZ_RESP_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -pthread -o $@ $^ $(call pc,--libs,libevent) -lm
# (libevent: block.c's timers, reached from client.c's close path.)
# The harness's dispatch callback runs cmd_dispatch() and sees each command
# and its reply bytes.
$(FUZZ_B)/fuzz_cmd: $(FUZZ_B)/obj/tests/fuzz/fuzz_cmd.o $(FUZZ_B)/obj/tests/fuzz/fuzz_common.o \
		    $(FUZZ_SRV_OBJS) $(FUZZ_HT_OBJS) $(FUZZ_RCU_OBJS) $(FUZZ_RESPLIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -pthread -o $@ $^ \
		$(call pc,--libs,hiredis liblzf $(SERVER_LUA_PC) libcrypto libevent) -lm -ldl

FUZZ_BINS := $(FUZZ_B)/fuzz_resp $(FUZZ_B)/fuzz_cmd
FUZZ_HARNESSES := fuzz_resp fuzz_cmd

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

# Each harness runs FUZZ_SECONDS on a scratch copy of its seed corpus
# (build/fuzz/corpus/<harness>, kept between runs), one process, no -jobs.
fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run_fuzz.sh $(FUZZ_B) $(FUZZ_HARNESSES)

# make test runs tests/fuzz/fuzz_short.sh, which skips itself (0 passed,
# 0 failed) under VARIANT=asan or tsan; only the release run builds the harnesses.
TEST_SCRIPTS += tests/fuzz/fuzz_short.sh
ifeq ($(VARIANT),release)
build-tests: $(FUZZ_BINS)
test-run: $(FUZZ_BINS)
endif

-include $(shell find $(FUZZ_B)/obj -name '*.d' 2>/dev/null)
