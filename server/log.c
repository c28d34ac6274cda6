/*
 * log.c - Redis-style log lines: "PID:ROLE DD Mon YYYY HH:MM:SS.mmm L message",
 * where L is '.' debug, '-' verbose, '*' notice, '#' warning.
 *
 * Owns the log file descriptor (stdout when logfile is empty).  Each line is
 * formatted into a stack buffer and written with one write(2), so lines from
 * different threads never interleave; no lock is taken.  The verbosity is read
 * from g_cfg.loglevel (atomic, CONFIG SET may change it).
 */
#include "server/server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_fd = 1;
static char log_role = 'M';

void srv_log_init(const char *file, int verbosity, char role)
{
	(void)verbosity;
	log_role = role;
	if (file && file[0]) {
		int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0) {
			fprintf(stderr, "Can't open the log file: %s\n", strerror(errno));
			_exit(1);
		}
		log_fd = fd;
	}
}

void srv_log_raw(int level, const char *msg)
{
	static const char marks[] = ".-*#";
	char buf[1200];
	struct timeval tv;
	struct tm tm;
	size_t n;

	if (level < atomic_load_explicit(&g_cfg.loglevel, memory_order_relaxed) ||
	    level > LL_WARNING)
		return;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	n = (size_t)snprintf(buf, sizeof(buf), "%d:%c ", (int)getpid(), log_role);
	n += strftime(buf + n, sizeof(buf) - n, "%d %b %Y %H:%M:%S.", &tm);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%03d %c %s\n", (int)(tv.tv_usec / 1000),
			      marks[level], msg);
	if (n >= sizeof(buf)) {
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	if (write(log_fd, buf, n) < 0) {
		/* nowhere left to report it */
	}
}

/* Decimal digits of @v at the end of buf[0..len), return where they start. */
static char *fmt_ull(char *buf, size_t len, unsigned long long v)
{
	char *p = buf + len;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v && p > buf);
	return p;
}

void srv_log_from_handler(const char *msg)
{
	char line[256], num[24], *d;
	size_t n = 0, k;

	/* Only async-signal-safe calls: getpid, time, write. */
	d = fmt_ull(num, sizeof(num), (unsigned long long)getpid());
	k = (size_t)(num + sizeof(num) - d);
	memcpy(line + n, d, k);
	n += k;
	memcpy(line + n, ":signal-handler (", 17);
	n += 17;
	d = fmt_ull(num, sizeof(num), (unsigned long long)time(NULL));
	k = (size_t)(num + sizeof(num) - d);
	memcpy(line + n, d, k);
	n += k;
	line[n++] = ')';
	line[n++] = ' ';
	k = strlen(msg);
	if (k > sizeof(line) - n - 1)
		k = sizeof(line) - n - 1;
	memcpy(line + n, msg, k);
	n += k;
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		/* nowhere left to report it */
	}
}

void srv_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level < atomic_load_explicit(&g_cfg.loglevel, memory_order_relaxed))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv_log_raw(level, msg);
}
