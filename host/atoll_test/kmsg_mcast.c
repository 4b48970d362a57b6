// SPDX-License-Identifier: GPL-2.0-only
/*
 * ATOLL_IOC_KMSG_MCAST: multicast checked and timed (abi/atoll_abi.h,
 * "Multicast"). Linux lends the LWKs one ring they all receive from
 * (host/kmsg_group.c), writes each check message into it once for all of
 * them, then sends the same messages as unicasts to each; every LWK counts
 * what arrived intact and in order (its side is in the test image,
 * kmsg-check's). One at a time, under atoll_lock.
 */
#include <linux/ktime.h>
#include <linux/vmalloc.h>
#include "atoll_test.h"

/*
 * Sends the check messages (into the group's ring, or to each LWK), then
 * END; waits for every LWK's report and adds it to req.
 */
static int phase(struct atoll_enclave **es, u32 n, struct atoll_kgroup *g,
		 struct atoll_kmsg_mcast_req *req, u8 *buf, u64 *ns)
{
	u64 t0 = ktime_get_ns(), count = req->count;
	u32 seq, i;
	int ret = 0;

	atoll_test_reports_reset(es, n);
	for (seq = 0; seq < req->count && !ret; seq++) {
		atoll_kmsg_check_fill(buf, req->len, 0, seq);
		if (g)
			ret = atoll_kgroup_send(g, ATOLL_KMSG_CHECK, buf, req->len);
		for (i = 0; i < n && !g && !ret; i++)
			ret = atoll_kmsg_check_send(es[i], ATOLL_KMSG_CHECK, buf, req->len);
	}
	/* END follows the messages on their own ring: rings do not order each other. */
	if (g && !ret)
		ret = atoll_kgroup_send(g, ATOLL_KMSG_CHECK_END, &count, sizeof(count));
	for (i = 0; i < n && !g && !ret; i++)
		ret = atoll_kmsg_send_wait(es[i], ATOLL_KMSG_CHECK_END, &count, sizeof(count));
	if (!ret)
		ret = atoll_lwks_wait(es, n, atoll_test_reported, 0);
	*ns = ktime_get_ns() - t0;
	for (i = 0; i < n && !ret; i++) {
		u64 received, bad;

		atoll_test_report(es[i], &received, &bad);
		req->received[i] += received;
		req->bad[i] += bad;
	}
	return ret;
}

/* The n enclaves named in req: each exists, runs and is named once. */
static int find_all(struct atoll_kmsg_mcast_req *req, struct atoll_enclave **es)
{
	u32 i, j;

	for (i = 0; i < req->n; i++) {
		es[i] = atoll_enclave_find(req->ids[i]);
		if (!es[i] || atoll_lwk_state(es[i]) != ATOLL_ENCLAVE_RUNNING) {
			atoll_err(req->error, "enclave %u does not exist or is not running",
				  req->ids[i]);
			return -EHOSTDOWN;
		}
		for (j = 0; j < i; j++)
			if (es[j] == es[i]) {
				atoll_err(req->error, "enclave %s is named twice", es[i]->name);
				return -EINVAL;
			}
	}
	return 0;
}

int atoll_test_kmsg_mcast(struct atoll_kmsg_mcast_req *req)
{
	struct atoll_enclave *es[ATOLL_MCAST_MAX];
	struct atoll_kgroup g;
	u8 *buf;
	int ret;

	if (atoll_may_admin(req->error, "run multicast checks"))
		return -EPERM;
	if (!req->n || req->n > ATOLL_MCAST_MAX) {
		atoll_err(req->error, "a multicast check goes to 1 to %u enclaves",
			  ATOLL_MCAST_MAX);
		return -EINVAL;
	}
	if (req->len < sizeof(struct atoll_kmsg_check) || req->len > ATOLL_KMSG_MAX_LEN ||
	    !req->count) {
		atoll_err(req->error, "check messages are %zu to %u bytes long, and at least one is sent",
			  sizeof(struct atoll_kmsg_check), ATOLL_KMSG_MAX_LEN);
		return -EINVAL;
	}
	ret = find_all(req, es);
	if (ret)
		return ret;
	buf = vmalloc(req->len);
	if (!buf)
		return -ENOMEM;
	ret = atoll_kgroup_join(&g, es, req->n, req->error);
	if (!ret) {
		ret = phase(es, req->n, &g, req, buf, &req->mcast_ns) ?:
		      phase(es, req->n, NULL, req, buf, &req->unicast_ns);
		if (ret)
			atoll_err(req->error, "not every LWK reported within %u s; the check needs the LWK's test image",
				  ATOLL_LWKS_WAIT_S);
		atoll_kgroup_leave(&g);
	}
	atoll_test_reports_reset(NULL, 0);
	vfree(buf);
	return ret;
}
