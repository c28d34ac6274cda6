/*
 * log.c - Redis-style log lines: "PID:ROLE DD Mon YYYY HH:MM:SS.mmm L message",
 * where L is '.' debug, '-' verbose, '*' notice, '#' warning.
 *
 * Owns the log file descriptor (stdout when logfile is empty).  Each line is
 * formatted into a stack buffer and written with one write(2), so lines from
 * different threads never interleave; no lock is taken.  The verbosity is read
 * from g_cfg.loglevel (atomic, CONFIG SET may change it).
 */
#include "server/config.h"
#include "server/log.h"

#include <stdarg.h>
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

/* Append what fits of s[0..k) to line[0..cap), at *n. */
static void put(char *line, size_t cap, size_t *n, const char *s, size_t k)
{
	if (k > cap - *n)
		k = cap - *n;
	memcpy(line + *n, s, k);
	*n += k;
}

/* Append the decimal digits of @v. */
static void put_ull(char *line, size_t cap, size_t *n, unsigned long long v)
{
	char num[24], *p = num + sizeof(num);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(line, cap, n, p, (size_t)(num + sizeof(num) - p));
}

void srv_log_from_handler(const char *msg)
{
	char line[256];
	size_t n = 0, cap = sizeof(line) - 1; /* room kept for the newline */

	/* Only async-signal-safe calls: getpid, time, write. */
	put_ull(line, cap, &n, (unsigned long long)getpid());
	put(line, cap, &n, ":signal-handler (", 17);
	put_ull(line, cap, &n, (unsigned long long)time(NULL));
	put(line, cap, &n, ") ", 2);
	put(line, cap, &n, msg, strlen(msg));
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
