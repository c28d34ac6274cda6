/*
 * cmd_tracking.c - the client-side caching subcommands of CLIENT: TRACKING,
 * CACHING, GETREDIR, TRACKINGINFO (Redis's clientCommand() in
 * networking.c); the state and the invalidations are tracking.c's.
 */
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/reply.h"
#include "server/tracking.h"
#include "server/util.h"

#include <stdlib.h>
#include <string.h>

/* CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN] [OPTOUT]
 * [NOLOOP]: the options are parsed (and REDIRECT's client looked up) before
 * ON/OFF is read, as Redis does. */
void cmd_client_tracking(struct conn *c, int argc)
{
	const char **pfx = xmalloc((size_t)argc * sizeof(*pfx));
	size_t *plen = xmalloc((size_t)argc * sizeof(*plen));
	unsigned opts = 0;
	long long redir = 0;
	int np = 0;
	char err[1024];
	const char *why = NULL;

	for (int j = 3; j < argc && !why; j++) {
		int more = argc - 1 - j;

		if (util_strcaseeq(K(j), "redirect") && more) {
			j++;
			if (redir != 0)
				why = "A client can only redirect to a single other client";
			else if (!resp_str2ll(K(j), &redir))
				why = ERR_NOT_INT;
			else if (!tracking_client_exists((uint64_t)redir))
				why = "The client ID you want redirect to does not exist";
		} else if (util_strcaseeq(K(j), "bcast")) {
			opts |= TRK_BCAST;
		} else if (util_strcaseeq(K(j), "optin")) {
			opts |= TRK_OPTIN;
		} else if (util_strcaseeq(K(j), "optout")) {
			opts |= TRK_OPTOUT;
		} else if (util_strcaseeq(K(j), "noloop")) {
			opts |= TRK_NOLOOP;
		} else if (util_strcaseeq(K(j), "prefix") && more) {
			j++;
			pfx[np] = ARGV(c, j);
			plen[np++] = ARGL(c, j);
		} else {
			why = ERR_SYNTAX;
		}
	}
	if (!why) {
		if (util_strcaseeq(K(2), "on"))
			why = tracking_on(c, opts, (uint64_t)redir, pfx, plen, np, err, sizeof(err));
		else if (util_strcaseeq(K(2), "off"))
			tracking_off(c);
		else
			why = ERR_SYNTAX;
	}
	if (why)
		reply_error(c, why);
	else
		reply_ok(c);
	free(pfx);
	free(plen);
}

void cmd_client_caching(struct conn *c, int argc)
{
	unsigned f = tracking_flags(c);

	(void)argc;
	if (!(f & TRK_ON)) {
		reply_error(c, "CLIENT CACHING can be called only when the client is in tracking "
			       "mode with OPTIN or OPTOUT mode enabled");
	} else if (util_strcaseeq(K(2), "yes")) {
		if (f & TRK_OPTIN) {
			c->trk_caching = 1;
			reply_ok(c);
		} else {
			reply_error(c, "CLIENT CACHING YES is only valid when tracking is enabled in "
				       "OPTIN mode.");
		}
	} else if (util_strcaseeq(K(2), "no")) {
		if (f & TRK_OPTOUT) {
			c->trk_caching = 1;
			reply_ok(c);
		} else {
			reply_error(c, "CLIENT CACHING NO is only valid when tracking is enabled in "
				       "OPTOUT mode.");
		}
	} else {
		reply_error(c, ERR_SYNTAX);
	}
}

void cmd_client_getredir(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, tracking_redirect(c));
}

void cmd_client_trackinginfo(struct conn *c, int argc)
{
	unsigned f = tracking_flags(c);
	const char *flags[7];
	int n = 0, np = tracking_nprefixes(c);

	(void)argc;
	flags[n++] = (f & TRK_ON) ? "on" : "off";
	if (f & TRK_BCAST)
		flags[n++] = "bcast";
	if (f & TRK_OPTIN) {
		flags[n++] = "optin";
		if (c->trk_caching)
			flags[n++] = "caching-yes";
	}
	if (f & TRK_OPTOUT) {
		flags[n++] = "optout";
		if (c->trk_caching)
			flags[n++] = "caching-no";
	}
	if (f & TRK_NOLOOP)
		flags[n++] = "noloop";
	if (tracking_broken(c))
		flags[n++] = "broken_redirect";
	reply_map(c, 3);
	reply_bulk_str(c, "flags");
	reply_set(c, n);
	for (int i = 0; i < n; i++)
		reply_bulk_str(c, flags[i]);
	reply_bulk_str(c, "redirect");
	reply_int(c, tracking_redirect(c));
	reply_bulk_str(c, "prefixes");
	reply_array(c, np);
	for (int i = 0; i < np; i++) {
		size_t len;
		const char *p = tracking_prefix(c, i, &len);

		reply_bulk(c, p, len);
	}
}
