// SPDX-License-Identifier: GPL-2.0-only
/*
 * A preloaded work-around (LD_PRELOAD) for a hang in MPI_Finalize of
 * Debian 12's MPICH 4.0.2 over UCX 1.13's TCP transport, on Linux as in an
 * enclave. MPICH closes every endpoint with a flush and waits for all of
 * them before its PMI barrier; UCX flushes a TCP endpoint that has sent
 * since its last flush with a PUT the peer must acknowledge, and a peer
 * already in the barrier never reads it (pmodels/mpich#6596, fixed in MPICH
 * 4.2.0; openucx/ucx#8738). Here the closes still run and push out what is
 * buffered, but once finalize has waited ATOLL_FINALIZE_WAIT_MS (2000) the
 * closes still pending count as done, so the rank goes on to the barrier.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <ucp/api/ucp.h>

static double closing_since = -1, wait_limit;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* MPICH's finalize closes its endpoints with this: the clock starts. */
ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
	static ucs_status_ptr_t (*real)(ucp_ep_h);

	if (!real)
		real = (ucs_status_ptr_t (*)(ucp_ep_h))dlsym(RTLD_NEXT, "ucp_disconnect_nb");
	if (closing_since < 0) {
		const char *ms = getenv("ATOLL_FINALIZE_WAIT_MS");

		wait_limit = (ms ? atof(ms) : 2000.0) / 1000.0;
		closing_since = now();
	}
	return real(ep);
}

/* ... and polls each close with this until it is done. */
int ucp_request_is_completed(void *request)
{
	static int (*real)(void *);

	if (!real)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "ucp_request_is_completed");
	if (real(request))
		return 1;
	return closing_since >= 0 && now() - closing_since > wait_limit;
}
