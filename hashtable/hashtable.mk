# hashtable/: the RCU hlist hash table, built once per RCU flavor, and
# librcukv, the embeddable cache (memb flavor).
#
#   $(B)/libht_qsbr.a   ht_* for rcukv-server (QSBR); link $(RCU_LIB) too
#   $(B)/libht_memb.a   ht_* for memb users inside the tree; link $(RCU_LIB) too
#   $(B)/librcukv.a     one relocatable object (ld -r) of rcukv_* + ht_* (memb)
#                       + librcu, every symbol but rcukv_* made local
#                       (objcopy), so an application's own ht_new or
#                       rcu_read_lock cannot clash; self-contained, no jemalloc
#   $(B)/librcukv.so    the same, position-independent, exporting rcukv_* only
#   $(B)/rcukv.pc       pkg-config file for an install under $(PREFIX)
#
# Tests (tests/hashtable/) run once per flavor.

PREFIX ?= /usr/local
HT_VERSION := 0.1.0

HT_SRCS := hashtable/ht.c
RCUKV_SRCS := hashtable/rcukv.c

HT_QSBR_OBJS := $(HT_SRCS:hashtable/%.c=$(B)/hashtable/qsbr/%.o)
HT_MEMB_OBJS := $(HT_SRCS:hashtable/%.c=$(B)/hashtable/memb/%.o)
# librcukv's own build of the table: memb, TTLs on CLOCK_MONOTONIC.
RCUKV_CFLAGS := -DRCU_FLAVOR_MEMB -DHT_CLOCK_MONOTONIC
RCUKV_OBJS := $(HT_SRCS:hashtable/%.c=$(B)/hashtable/lib/%.o) \
	      $(RCUKV_SRCS:hashtable/%.c=$(B)/hashtable/lib/%.o)
RCUKV_PIC_OBJS := $(HT_SRCS:hashtable/%.c=$(B)/hashtable/pic/%.o) \
		  $(RCUKV_SRCS:hashtable/%.c=$(B)/hashtable/pic/%.o) \
		  $(RCU_SRCS:rcu/%.c=$(B)/hashtable/pic/rcu/%.o)

HT_QSBR_LIB := $(B)/libht_qsbr.a
HT_MEMB_LIB := $(B)/libht_memb.a
RCUKV_LIB := $(B)/librcukv.a
RCUKV_SO := $(B)/librcukv.so
RCUKV_PC := $(B)/rcukv.pc

$(B)/hashtable/qsbr/%.o: hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRCU_FLAVOR_QSBR -c $< -o $@
$(B)/hashtable/memb/%.o: hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRCU_FLAVOR_MEMB -c $< -o $@
$(B)/hashtable/lib/%.o: hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RCUKV_CFLAGS) -c $< -o $@
$(B)/hashtable/pic/%.o: hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC $(RCUKV_CFLAGS) -c $< -o $@
$(B)/hashtable/pic/rcu/%.o: rcu/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(HT_QSBR_LIB): $(HT_QSBR_OBJS)
	rm -f $@ && ar rcs $@ $^
$(HT_MEMB_LIB): $(HT_MEMB_OBJS)
	rm -f $@ && ar rcs $@ $^
$(B)/hashtable/librcukv.o: $(RCUKV_OBJS) $(RCU_OBJS)
	$(LD) -r -o $@.tmp $^
	nm --defined-only -g $@.tmp | awk '$$3 ~ /^rcukv_/ {print $$3}' > $@.syms
	objcopy --keep-global-symbols=$@.syms $@.tmp $@
	rm -f $@.tmp
$(RCUKV_LIB): $(B)/hashtable/librcukv.o
	rm -f $@ && ar rcs $@ $^
$(RCUKV_SO): $(RCUKV_PIC_OBJS) hashtable/rcukv.map hashtable/hashtable.mk
	$(CC) -shared -Wl,-soname,librcukv.so.0 -Wl,--version-script=hashtable/rcukv.map \
		-o $@ $(RCUKV_PIC_OBJS) $(LDFLAGS)
$(RCUKV_PC): rcukv.pc.in hashtable/hashtable.mk
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(HT_VERSION)|g' \
	    -e 's|@LIBS_PRIVATE@|-pthread|g' $< > $@

PRODUCT_BINS += $(HT_QSBR_LIB) $(HT_MEMB_LIB) $(RCUKV_LIB) $(RCUKV_SO) $(RCUKV_PC)

# --- install (the top Makefile declares it phony) ---------------------------
install: $(RCUKV_LIB) $(RCUKV_SO) $(RCUKV_PC)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 hashtable/rcukv.h $(DESTDIR)$(PREFIX)/include/rcukv.h
	install -m 644 $(RCUKV_LIB) $(DESTDIR)$(PREFIX)/lib/librcukv.a
	install -m 755 $(RCUKV_SO) $(DESTDIR)$(PREFIX)/lib/librcukv.so.$(HT_VERSION)
	ln -sf librcukv.so.$(HT_VERSION) $(DESTDIR)$(PREFIX)/lib/librcukv.so.0
	ln -sf librcukv.so.0 $(DESTDIR)$(PREFIX)/lib/librcukv.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(HT_VERSION)|g' \
	    -e 's|@LIBS_PRIVATE@|-pthread|g' rcukv.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/rcukv.pc

# --- tests ----------------------------------------------------------------------
HT_TEST_CFLAGS = $(call pc,--cflags,cmocka)
HT_TEST_LIBS = $(RCU_LIB) $(JEMALLOC_LIBS)

$(B)/tests/hashtable/qsbr/%.o: tests/hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HT_TEST_CFLAGS) -DRCU_FLAVOR_QSBR -c $< -o $@
$(B)/tests/hashtable/memb/%.o: tests/hashtable/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HT_TEST_CFLAGS) -DRCU_FLAVOR_MEMB -c $< -o $@

$(B)/tests/hashtable/test_ht_qsbr: $(B)/tests/hashtable/qsbr/test_ht.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS) $(call pc,--libs,cmocka)
$(B)/tests/hashtable/test_ht_memb: $(B)/tests/hashtable/memb/test_ht.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS) $(call pc,--libs,cmocka)
$(B)/tests/hashtable/test_ht_torture_qsbr: $(B)/tests/hashtable/qsbr/test_ht_torture.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_torture_memb: $(B)/tests/hashtable/memb/test_ht_torture.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS)

$(B)/tests/hashtable/test_ht_srcu_qsbr: $(B)/tests/hashtable/qsbr/test_ht_srcu.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_srcu_memb: $(B)/tests/hashtable/memb/test_ht_srcu.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_snapshot_qsbr: $(B)/tests/hashtable/qsbr/test_ht_snapshot.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_snapshot_memb: $(B)/tests/hashtable/memb/test_ht_snapshot.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_txn_qsbr: $(B)/tests/hashtable/qsbr/test_ht_txn.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_txn_memb: $(B)/tests/hashtable/memb/test_ht_txn.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS)

$(B)/tests/hashtable/test_ht_extern_qsbr: $(B)/tests/hashtable/qsbr/test_ht_extern.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_QSBR_LIB) $(HT_TEST_LIBS)
$(B)/tests/hashtable/test_ht_extern_memb: $(B)/tests/hashtable/memb/test_ht_extern.o $(HT_MEMB_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(HT_MEMB_LIB) $(HT_TEST_LIBS)

# librcukv through rcukv.h only, linked as an application links librcukv.a.
$(B)/tests/hashtable/test_rcukv: tests/hashtable/test_rcukv.c hashtable/rcukv.h tests/check.h $(RCUKV_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(RCUKV_LIB) $(LDFLAGS)

# The example program, linked in-tree against librcukv.a.
$(B)/examples/cache/cache: examples/cache/cache.c hashtable/rcukv.h $(RCUKV_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ihashtable -o $@ $< $(RCUKV_LIB) $(LDFLAGS)

HT_TESTS := $(B)/tests/hashtable/test_ht_qsbr $(B)/tests/hashtable/test_ht_memb \
	    $(B)/tests/hashtable/test_ht_torture_qsbr $(B)/tests/hashtable/test_ht_torture_memb \
	    $(B)/tests/hashtable/test_ht_srcu_qsbr $(B)/tests/hashtable/test_ht_srcu_memb \
	    $(B)/tests/hashtable/test_ht_snapshot_qsbr $(B)/tests/hashtable/test_ht_snapshot_memb \
	    $(B)/tests/hashtable/test_ht_txn_qsbr $(B)/tests/hashtable/test_ht_txn_memb \
	    $(B)/tests/hashtable/test_ht_extern_qsbr $(B)/tests/hashtable/test_ht_extern_memb \
	    $(B)/tests/hashtable/test_rcukv $(B)/examples/cache/cache
TEST_BINS += $(HT_TESTS)
ALL_BINS += $(HT_TESTS)
# Installs into a temporary prefix and builds the example with pkg-config only.
TEST_SCRIPTS += tests/hashtable/test_install.sh tests/hashtable/broken_gp.sh \
		tests/hashtable/test_rcukv_valgrind.sh
test-run: $(RCUKV_LIB) $(RCUKV_SO) $(RCUKV_PC)
# Installs into a temporary prefix and builds the example with pkg-config only.

# --- benchmark --------------------------------------------------------------------
# rcukv's table (QSBR) against liburcu's cds_lfht (urcu-qsbr), one binary; the
# two sides are separate objects because their RCU headers share macro names.
BENCH_SUBJECTS += hashtable
HT_BENCH_URCU = liburcu-qsbr liburcu-cds
$(B)/bench/hashtable/bench_hashtable.o: bench/bench_hashtable.c bench/bench_hashtable.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRCU_FLAVOR_QSBR $(call pc,--cflags,jemalloc) -c $< -o $@
$(B)/bench/hashtable/bench_hashtable_lfht.o: bench/bench_hashtable_lfht.c bench/bench_hashtable.h
	@mkdir -p $(dir $@)
	$(call need_pc,liburcu-cds)
	$(CC) $(CFLAGS) $(call pc,--cflags,$(HT_BENCH_URCU)) -c $< -o $@
$(B)/bench/bench_hashtable: $(B)/bench/hashtable/bench_hashtable.o \
		$(B)/bench/hashtable/bench_hashtable_lfht.o $(HT_QSBR_LIB) $(RCU_LIB)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(HT_QSBR_LIB) $(RCU_LIB) \
		$(call pc,--libs,$(HT_BENCH_URCU)) $(call pc,--libs,jemalloc)
.PHONY: bench-hashtable
bench-hashtable: $(B)/bench/bench_hashtable
	$(B)/bench/bench_hashtable

# ht_snapshot() throughput beside ht_scan_all() over 2,000,000 keys (500,000
# with BENCH_QUICK=1), idle and under a writer; figures only, not a subject of
# `make bench` (no reference system to divide by).
.PHONY: bench-ht-snapshot
bench-ht-snapshot: $(B)/tests/hashtable/test_ht_snapshot_qsbr
	$< --bench $(if $(BENCH_QUICK),500000,2000000)

# librcukv as a cache tier against pthread_rwlock + GLib GHashTable + LRU
# (libglib2.0-dev), one binary: bench/bench_librcukv.c.  Links the library
# exactly as an application does (librcukv.a, rcukv.h only).
BENCH_SUBJECTS += librcukv
$(B)/bench/librcukv/bench_librcukv.o: bench/bench_librcukv.c hashtable/rcukv.h
	@mkdir -p $(dir $@)
	$(call need_pc,glib-2.0)
	$(CC) $(CFLAGS) $(call pc,--cflags,glib-2.0) -c $< -o $@
$(B)/bench/bench_librcukv: $(B)/bench/librcukv/bench_librcukv.o $(RCUKV_LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(RCUKV_LIB) $(call pc,--libs,glib-2.0) -lm
.PHONY: bench-librcukv
bench-librcukv:
	@$(MAKE) --no-print-directory VARIANT=release build/release/bench/bench_librcukv
	build/release/bench/bench_librcukv
