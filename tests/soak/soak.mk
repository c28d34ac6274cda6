# tests/soak: the soak and fault test (issue 9).  Needs rcukv-server.
$(B)/tests/soak/soak: $(B)/tests/soak/soak.o
	$(CC) $(LDFLAGS) -o $@ $< $(call pc,--libs,libevent hiredis)
build-tests: $(B)/tests/soak/soak $(B)/rcukv-server
test-run: $(B)/tests/soak/soak
# Registered in TEST_SCRIPTS once the server returns freed memory (jemalloc
# background thread); run it with: make build-tests && tests/soak/soak.sh
# TEST_SCRIPTS += tests/soak/soak.sh
