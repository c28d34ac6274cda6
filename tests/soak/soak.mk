# tests/soak: the soak and fault test (issue 9).  Needs rcukv-server.
$(B)/tests/soak/soak: $(B)/tests/soak/soak.o
	$(CC) $(LDFLAGS) -o $@ $< $(call pc,--libs,libevent hiredis)
build-tests: $(B)/tests/soak/soak $(B)/rcukv-server
test-run: $(B)/tests/soak/soak
TEST_SCRIPTS += tests/soak/soak.sh
