# resp/: libresp.a, the RESP wire format (resp/resp.h): strict numbers, the
# request header and reply scanners, argument splitting, command encoding.
# libc only; linked by rcukv-server, rcukv-cli, the tests and the fuzzers.
RESP_SRCS := resp/scan.c resp/split.c resp/encode.c
RESP_OBJS := $(RESP_SRCS:%.c=$(B)/%.o)
RESP_LIB := $(B)/libresp.a

$(RESP_LIB): $(RESP_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

PRODUCT_BINS += $(RESP_LIB)

# tests/resp/test_resp: the scanners resumed at every byte boundary, the
# limits, strict numbers, splitting and encoding (cmocka).
$(B)/tests/resp/test_resp.o: CFLAGS += $(call pc,--cflags,cmocka)
$(B)/tests/resp/test_resp: $(B)/tests/resp/test_resp.o $(RESP_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc,--libs,cmocka)
TEST_BINS += $(B)/tests/resp/test_resp
