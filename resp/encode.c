/*
 * encode.c - commands as RESP multibulks (resp.h): what every client of
 * the project sends.
 */
#include "resp/resp.h"

static size_t digits(unsigned long long v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

size_t resp_encode_len(int argc, const size_t *lens)
{
	size_t n = 1 + digits((unsigned long long)argc) + 2;

	for (int i = 0; i < argc; i++)
		n += 1 + digits(lens[i]) + 2 + lens[i] + 2;
	return n;
}

static size_t put_header(char *out, char type, long long v)
{
	size_t n;

	out[0] = type;
	n = 1 + resp_ll2str(out + 1, v);
	out[n++] = '\r';
	out[n++] = '\n';
	return n;
}

size_t resp_encode(char *out, int argc, const char *const *argv, const size_t *lens)
{
	size_t n = put_header(out, '*', argc);

	for (int i = 0; i < argc; i++) {
		n += put_header(out + n, '$', (long long)lens[i]);
		memcpy(out + n, argv[i], lens[i]);
		n += lens[i];
		out[n++] = '\r';
		out[n++] = '\n';
	}
	return n;
}
