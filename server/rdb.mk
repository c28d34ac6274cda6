# server/rdb.mk: the RDB format layer (issue 8): server/rdb.c as an object the
# server links later ($(RDB_OBJ), needs $(RDB_LIBS)), its tests and its bench.
#   tests/server/test_rdb     unit tests: CRC64, exact encodings, round trips,
#                             corruption sweeps (ours and a redis-server fixture
#                             in tests/server/rdb-corpus/), disk full, EACCES,
#                             kill -9 mid-save; also a tool (write, verify-*,
#                             records, load, print) the script drives.  Runs
#                             from the repository root, as tests/run.sh does.
#   tests/server/rdb_redis.sh redis-check-rdb, a real redis-server 7 (ports
#                             7300-7349), a full tmpfs when mount works
#   make bench-rdb            save/load throughput, 1,000,000 keys
#
# liblzf is checked when rdb.o is built, not when this file is read, so that
# `make test` on a fresh machine gets to install it (scripts/deps.sh) first.
# The server links $(RDB_OBJ) and adds $(RDB_LIBS) to its link line.

RDB_OBJ := $(B)/server/rdb.o
RDB_LIBS = $(call pc,--libs,liblzf)
$(RDB_OBJ): server/rdb.c
	$(call need_pc,liblzf)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call pc,--cflags,liblzf) -c $< -o $@

$(B)/tests/server/test_rdb: $(B)/tests/server/test_rdb.o $(RDB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(RDB_LIBS)
TEST_BINS += $(B)/tests/server/test_rdb
TEST_SCRIPTS += tests/server/rdb_redis.sh

$(B)/bench/bench_rdb: $(B)/bench/bench_rdb.o $(RDB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(RDB_LIBS)

# make bench-rdb: save and load throughput of the format layer (release build).
.PHONY: bench-rdb
bench-rdb:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_rdb
	build/release/bench/bench_rdb
