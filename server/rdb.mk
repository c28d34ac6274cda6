# server/rdb.mk: the RDB format layer (issue 8): server/rdb.c as an object the
# server links later ($(RDB_OBJ), needs $(RDB_LIBS)), its tests and its bench.
#   tests/server/test_rdb     unit tests: round trips, CRC vectors, corruption
#                             sweeps, disk full (RLIMIT_FSIZE); also a tool
#                             (write/dump/check modes) used by the scripts
#   tests/server/rdb_redis.sh redis-check-rdb and a real redis-server 7
#   make bench-rdb            save/load throughput, 1,000,000 keys
$(call need_pc,liblzf)

RDB_OBJ := $(B)/server/rdb.o
RDB_LIBS = $(call pc,--libs,liblzf)
$(RDB_OBJ): CFLAGS += $(call pc,--cflags,liblzf)

$(B)/tests/server/test_rdb: $(B)/tests/server/test_rdb.o $(RDB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(RDB_LIBS)
TEST_BINS += $(B)/tests/server/test_rdb
TEST_SCRIPTS += tests/server/rdb_redis.sh
# The script drives the test binary in tool mode.
build-tests: $(B)/tests/server/test_rdb

$(B)/bench/bench_rdb: $(B)/bench/bench_rdb.o $(RDB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(RDB_LIBS)

# make bench-rdb: save and load throughput of the format layer (release build).
.PHONY: bench-rdb
bench-rdb:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_rdb
	build/release/bench/bench_rdb
