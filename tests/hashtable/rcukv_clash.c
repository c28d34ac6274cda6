/*
 * rcukv_clash.c - an application that defines functions named like
 * librcukv's internals (ht_*, rcu_*, synchronize_srcu) and still links with
 * librcukv, statically and dynamically, and runs (issue 21: librcukv.a used
 * to export 109 internal symbols, so this failed to link statically).
 * Built and run by tests/hashtable/test_install.sh against an installed
 * library.  Prints 'N passed, M failed'.
 */
#include <stdio.h>
#include <string.h>

#include <rcukv.h>

/* The application's own functions, unrelated to the library's. */
int ht_new(int x);
int ht_get(int x);
int rcu_read_lock(int x);
int synchronize_srcu(int x);
int ht_new(int x)
{
	return x + 1;
}
int ht_get(int x)
{
	return x + 2;
}
int rcu_read_lock(int x)
{
	return x + 3;
}
int synchronize_srcu(int x)
{
	return x + 4;
}

int main(void)
{
	rcukv *kv = rcukv_open(NULL);
	char buf[8];
	int ok = kv && rcukv_set(kv, "k", 1, "v", 1, 0) == 0 &&
		 rcukv_get_buf(kv, "k", 1, buf, sizeof(buf)) == 1 && buf[0] == 'v';
	int mine =
	    ht_new(0) == 1 && ht_get(0) == 2 && rcu_read_lock(0) == 3 && synchronize_srcu(0) == 4;

	rcukv_close(kv);
	printf("%s the cache works beside the application's ht_new/rcu_read_lock\n",
	       ok ? "ok  " : "FAIL");
	printf("%s the application's own ht_new/ht_get/rcu_read_lock/synchronize_srcu run\n",
	       mine ? "ok  " : "FAIL");
	printf("%d passed, %d failed\n", ok + mine, 2 - ok - mine);
	return ok && mine ? 0 : 1;
}
