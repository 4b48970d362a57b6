// SPDX-License-Identifier: GPL-2.0-only
/*
 * What each LWK under check says it got of Linux's check messages
 * (CHECK_REPORT, after CHECK_END), for kmsg_check.c and kmsg_mcast.c: up to
 * ATOLL_MCAST_MAX LWKs at a time.
 */
#include "atoll_test.h"

static struct {
	spinlock_t lock;		/* the handler (message interrupt) and the ioctls */
	struct {
		struct atoll_enclave *e;
		bool came;
		u64 received, bad;
	} lwk[ATOLL_MCAST_MAX];
} reports = { .lock = __SPIN_LOCK_UNLOCKED(reports.lock) };

static void on_report(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	u32 i;

	spin_lock(&reports.lock);
	for (i = 0; i < ATOLL_MCAST_MAX; i++)
		if (reports.lwk[i].e == e) {
			reports.lwk[i].received = atoll_kmsg_word(m, 0);
			reports.lwk[i].bad = atoll_kmsg_word(m, 1);
			reports.lwk[i].came = true;
		}
	spin_unlock(&reports.lock);
}

/* Forgets every report: the n LWKs of es (at most ATOLL_MCAST_MAX) report next. */
void atoll_test_reports_reset(struct atoll_enclave **es, u32 n)
{
	u32 i;

	spin_lock_irq(&reports.lock);
	for (i = 0; i < ATOLL_MCAST_MAX; i++) {
		reports.lwk[i].e = i < n ? es[i] : NULL;
		reports.lwk[i].came = false;
	}
	spin_unlock_irq(&reports.lock);
}

/* Whether e has reported since the reset; its counts into received and bad. */
bool atoll_test_report(struct atoll_enclave *e, u64 *received, u64 *bad)
{
	bool came = false;
	u32 i;

	spin_lock_irq(&reports.lock);
	for (i = 0; i < ATOLL_MCAST_MAX; i++)
		if (reports.lwk[i].e == e && reports.lwk[i].came) {
			*received = reports.lwk[i].received;
			*bad = reports.lwk[i].bad;
			came = true;
		}
	spin_unlock_irq(&reports.lock);
	return came;
}

/* For atoll_lwks_wait(): e has reported. */
bool atoll_test_reported(struct atoll_enclave *e, u64 unused)
{
	u64 r, b;

	return atoll_test_report(e, &r, &b);
}

static const u16 types[] = { ATOLL_KMSG_CHECK_REPORT };
static const atoll_kmsg_handler handlers[] = { on_report };

int atoll_test_reports_init(void)
{
	return atoll_test_register(types, handlers, ARRAY_SIZE(types));
}

void atoll_test_reports_exit(void)
{
	atoll_test_unregister(types, ARRAY_SIZE(types));
}
