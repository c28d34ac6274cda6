# tests/server/: integration tests of rcukv-server (issue 5).  The binary
# starts $(B)/rcukv-server itself on a free loopback port (7200-7299); pass
# --host/--port to point it at a running server (e.g. a real redis-server).
$(B)/tests/server/test_server: $(B)/tests/server/test_server.o | $(B)/rcukv-server
	$(CC) $(LDFLAGS) -o $@ $<
TEST_BINS += $(B)/tests/server/test_server
TEST_SCRIPTS += tests/server/test_security.sh
TEST_SCRIPTS += tests/server/test_tls.sh
