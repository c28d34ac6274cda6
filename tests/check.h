/*
 * tests/check.h - the checks every C test counts, and the closing line that
 * tests/run.sh reads.  Header only: each test program is one translation unit
 * that includes it once (the counters are static).
 *
 *   CHECK(cond, fmt, ...)  one check: counted as passed when cond holds, else
 *                          counted as failed and reported on one line,
 *                          "FAIL <file>:<line>: <message>".  The message
 *                          arguments are evaluated only on failure (and in
 *                          verbose mode).  cond is evaluated exactly once.
 *   SKIP(fmt, ...)         a check that cannot be made here (a tool missing,
 *                          a race lost): "SKIP <file>:<line>: <message>",
 *                          counted as skipped, never as passed.
 *   check_summary()        prints "N passed, M failed, K skipped" and returns
 *                          the exit status: 1 on any failure, else 0.
 *
 * With RCUKV_CHECK_VERBOSE=1 in the environment every passing check also
 * prints "ok   <file>:<line>: <message>"; by default only failures and skips
 * print, so a suite of thousands of checks stays readable.
 *
 * Cases: a test that reports per case rather than per check (test_rculist)
 * brackets each case with check_case_begin() and check_case_end(): inside a
 * case a CHECK still prints its FAIL line but counts nothing; the case's end
 * counts one pass, or one failure when any CHECK in it failed, and prints
 * "ok   <name>" or "FAIL <name>".  Cases do not nest.
 *
 * Context: CHECK and SKIP may be called from any thread, including threads
 * a case started (the torture readers): the counters are C11 atomics
 * (relaxed: each is a plain event count, read only by check_summary() or
 * check_case_end() after the threads that count into it have been joined,
 * and pthread_join() orders their increments before the read).  Each report
 * line is written under flockfile(stdout), so lines from two threads never
 * interleave, and flushed at once, so a test that crashes afterwards still
 * shows what failed.  check_case_begin()/check_case_end() are called from the
 * main thread, with no other thread counting into the case.
 */
#ifndef RCUKV_TESTS_CHECK_H
#define RCUKV_TESTS_CHECK_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int check_n_passed, check_n_failed, check_n_skipped;
/* Inside a case: the number of failed checks since check_case_begin(). */
static atomic_int check_case_failures;
static atomic_bool check_in_case;

/**
 * check_verbose() - whether passing checks print an "ok" line.
 *
 * Context: any thread.  Reads RCUKV_CHECK_VERBOSE once; a race between two
 * first calls only repeats the same getenv().
 * Return: true when RCUKV_CHECK_VERBOSE is set to a value other than "0".
 */
static inline bool check_verbose(void)
{
	static atomic_int cached = -1; /* -1 unknown, 0 quiet, 1 verbose */
	int v = atomic_load_explicit(&cached, memory_order_relaxed);

	if (v < 0) {
		const char *e = getenv("RCUKV_CHECK_VERBOSE");

		v = e && *e && strcmp(e, "0") != 0;
		atomic_store_explicit(&cached, v, memory_order_relaxed);
	}
	return v;
}

/**
 * check_report() - print one "<tag> <file>:<line>: <message>" line.
 * @tag: "ok  ", "FAIL" or "SKIP".
 * @file: __FILE__ of the check.
 * @line: __LINE__ of the check.
 * @fmt: printf format of the message, then its arguments.
 *
 * Context: any thread; the line is written whole under the stdout lock and
 * flushed.
 */
__attribute__((format(printf, 4, 5))) static inline void
check_report(const char *tag, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	flockfile(stdout);
	printf("%s %s:%d: ", tag, file, line);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
	va_end(ap);
}

/**
 * check_count() - count the outcome of one check.
 * @ok: whether the check held.
 *
 * Context: any thread.  Inside a case a failure is counted for the case and a
 * pass is not counted at all (check_case_end() counts the case).
 * Return: @ok, so that CHECK can report a failure.
 */
static inline bool check_count(bool ok)
{
	if (atomic_load_explicit(&check_in_case, memory_order_relaxed)) {
		if (!ok)
			atomic_fetch_add_explicit(&check_case_failures, 1, memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(ok ? &check_n_passed : &check_n_failed, 1,
					  memory_order_relaxed);
	}
	return ok;
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!check_count(!!(cond)))                                                        \
			check_report("FAIL", __FILE__, __LINE__, __VA_ARGS__);                     \
		else if (check_verbose())                                                          \
			check_report("ok  ", __FILE__, __LINE__, __VA_ARGS__);                     \
	} while (0)

#define SKIP(...)                                                                                  \
	do {                                                                                       \
		atomic_fetch_add_explicit(&check_n_skipped, 1, memory_order_relaxed);              \
		check_report("SKIP", __FILE__, __LINE__, __VA_ARGS__);                             \
	} while (0)

/**
 * check_case_begin() - start a case: the CHECKs until check_case_end() count
 * as one pass or one failure.
 *
 * Context: main thread, outside any case; no other thread is counting.
 */
static inline void check_case_begin(void)
{
	atomic_store_explicit(&check_case_failures, 0, memory_order_relaxed);
	atomic_store_explicit(&check_in_case, true, memory_order_relaxed);
}

/**
 * check_case_end() - end the case check_case_begin() started, count it and
 * print "ok   <name>" or "FAIL <name>".
 * @fmt: printf format of the case's name, then its arguments.
 *
 * Context: main thread; every thread the case started has been joined.
 * Return: true when every CHECK of the case held.
 */
__attribute__((format(printf, 1, 2))) static inline bool check_case_end(const char *fmt, ...)
{
	bool ok = atomic_load_explicit(&check_case_failures, memory_order_relaxed) == 0;
	va_list ap;

	atomic_store_explicit(&check_in_case, false, memory_order_relaxed);
	check_count(ok);
	va_start(ap, fmt);
	flockfile(stdout);
	printf("%-4s ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
	va_end(ap);
	return ok;
}

/**
 * check_failures() - the number of failures counted so far (cases included).
 *
 * Context: any thread; exact once the counting threads have been joined.
 */
static inline int check_failures(void)
{
	return atomic_load_explicit(&check_n_failed, memory_order_relaxed);
}

/**
 * check_summary() - print the closing line, "N passed, M failed, K skipped".
 *
 * Context: main thread, after every thread that counts has been joined.
 * Return: the test's exit status: 1 when anything failed, else 0.
 */
static inline int check_summary(void)
{
	int p = atomic_load_explicit(&check_n_passed, memory_order_relaxed);
	int f = atomic_load_explicit(&check_n_failed, memory_order_relaxed);
	int s = atomic_load_explicit(&check_n_skipped, memory_order_relaxed);

	printf("%d passed, %d failed, %d skipped\n", p, f, s);
	fflush(stdout);
	return f ? 1 : 0;
}

#endif /* RCUKV_TESTS_CHECK_H */
