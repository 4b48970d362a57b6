/* SPDX-License-Identifier: GPL-2.0-only */
/* The test module atoll_test.ko: what its files share. */
#ifndef ATOLL_TEST_H
#define ATOLL_TEST_H

#include "atoll.h"

/* main.c: /dev/atoll-test; message handlers taken and given back together */
int atoll_test_register(const u16 *types, const atoll_kmsg_handler *fns, u32 n);
void atoll_test_unregister(const u16 *types, u32 n);

/* kmsg_check.c: ATOLL_IOC_KMSG_CHECK, both rings flooded with checked messages */
int atoll_test_check_init(void);
void atoll_test_check_exit(void);
int atoll_test_kmsg_check(struct atoll_kmsg_check_req *req);
void atoll_kmsg_check_fill(u8 *buf, u32 len, u32 sender, u32 seq);
int atoll_kmsg_check_send(struct atoll_enclave *e, u16 type, const void *data, u32 len);

/* reports.c: what the LWKs report of Linux's check messages (CHECK_REPORT) */
int atoll_test_reports_init(void);
void atoll_test_reports_exit(void);
void atoll_test_reports_reset(struct atoll_enclave **es, u32 n);
bool atoll_test_report(struct atoll_enclave *e, u64 *received, u64 *bad);
bool atoll_test_reported(struct atoll_enclave *e, u64 unused);

/* kmsg_bench.c: ATOLL_IOC_KMSG_BENCH, round trips against their baselines */
int atoll_test_bench_init(void);
void atoll_test_bench_exit(void);
int atoll_test_kmsg_bench(struct atoll_kmsg_bench_req *req);

/* kmsg_mcast.c: ATOLL_IOC_KMSG_MCAST, a multicast ring checked and timed */
int atoll_test_kmsg_mcast(struct atoll_kmsg_mcast_req *req);

#endif /* ATOLL_TEST_H */
