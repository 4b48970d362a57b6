// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signals as a program sees them; prints the same lines on Linux and in an
 * enclave. `signals` runs the checks in one process; `signals wait` prints
 * its pid and waits for SIGUSR1 from `signals send PID`; `signals term`
 * waits for a SIGTERM it handles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, where_ok, last_code;
static volatile pid_t handler_tid, sender_pid;
static sigjmp_buf escape;
static volatile void *fault_addr;
static char altstack[64 * 1024];
/* Alternate stacks ending at every 64-byte step of a page (see check_fpu_frames). */
static char page_stacks[3 * 4096] __attribute__((aligned(4096)));
/* An address no program maps (volatile: the compiler cannot see through it). */
static volatile uintptr_t unmapped = 16;

static void on_signal(int sig) { hits++; handler_tid = gettid(); }

static void on_info(int sig, siginfo_t *si, void *uc)
{
	hits++;
	last_code = si->si_code;
	sender_pid = si->si_pid;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	fault_addr = si->si_addr;
	last_code = si->si_code;
	siglongjmp(escape, sig);
}

static void on_alt(int sig)
{
	char here;

	where_ok = &here >= altstack && &here < altstack + sizeof(altstack);
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void handle_info(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void check_alarm(void)
{
	int r;

	hits = 0;
	handle(SIGALRM, on_signal, 0);
	alarm(1);
	r = pause();
	printf("alarm: handler ran %d time, pause returned %d (%s)\n", hits, r,
	       errno == EINTR ? "EINTR" : "?");
	printf("alarm: nothing left: %u\n", alarm(0));
}

static void check_itimer(void)
{
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } }, left;
	sigset_t none, alarm_only;

	hits = 0;
	sigemptyset(&none);
	/*
	 * Blocked but inside sigsuspend: one tick handled per turn, and none
	 * after the third (a host that stalls the program for a tick's time
	 * would otherwise count a fourth before the line is printed).
	 */
	sigemptyset(&alarm_only);
	sigaddset(&alarm_only, SIGALRM);
	sigprocmask(SIG_BLOCK, &alarm_only, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (hits < 3)
		sigsuspend(&none);
	getitimer(ITIMER_REAL, &left);
	printf("setitimer: %d ticks, still armed: %s\n", hits,
	       left.it_value.tv_sec || left.it_value.tv_usec ? "yes" : "no");
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigprocmask(SIG_UNBLOCK, &alarm_only, NULL);
}

static volatile int spin_stop;

static void *spinner(void *arg)
{
	*(pid_t *)arg = gettid();
	while (!spin_stop && !hits)
		;
	return NULL;
}

static void check_threads(void)
{
	pthread_t t;
	volatile pid_t tid = 0;

	hits = 0;
	handler_tid = 0;
	handle(SIGUSR1, on_signal, 0);
	pthread_create(&t, NULL, spinner, (void *)&tid);
	while (!tid)
		;
	/* Signal 0 only probes: nothing is sent. */
	printf("threads: signal 0 to the thread: %d\n", pthread_kill(t, 0));
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	printf("threads: SIGUSR1 ran in the target thread: %s\n",
	       handler_tid == tid ? "yes" : "no");
}

static void check_faults(void)
{
	char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int sig;

	handle_info(SIGSEGV, on_fault);
	sig = sigsetjmp(escape, 1);
	if (!sig)
		*(volatile int *)unmapped = 1;
	printf("segv: caught signal %d at %p, %s\n", sig, (void *)fault_addr,
	       last_code == SEGV_MAPERR ? "SEGV_MAPERR" : "?");
	sig = sigsetjmp(escape, 1);
	if (!sig)
		page[8] = 1;
	printf("segv: read-only page: signal %d at offset %ld, %s\n", sig,
	       (long)((char *)fault_addr - page), last_code == SEGV_ACCERR ? "SEGV_ACCERR" : "?");
	munmap(page, 4096);
	signal(SIGSEGV, SIG_DFL);
}

static void check_altstack(void)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	sigaltstack(&ss, NULL);
	handle(SIGUSR2, on_alt, SA_ONSTACK);
	raise(SIGUSR2);
	printf("sigaltstack: handler on the alternate stack: %s\n", where_ok ? "yes" : "no");
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

static void check_siginfo_and_masks(void)
{
	sigset_t block, pending;

	hits = 0;
	handle_info(SIGUSR1, on_info);
	kill(getpid(), SIGUSR1);
	printf("siginfo: from my pid: %s, code SI_USER: %s\n",
	       sender_pid == getpid() ? "yes" : "no", last_code == SI_USER ? "yes" : "no");

	hits = 0;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	raise(SIGUSR1);
	sigpending(&pending);
	printf("mask: pending while blocked: %s, handled: %d\n",
	       sigismember(&pending, SIGUSR1) ? "yes" : "no", hits);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	printf("mask: handled once unblocked: %d\n", hits);
}

static void check_sigtimedwait(void)
{
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int r;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR2);
	r = sigtimedwait(&set, &si, &ts);
	printf("sigtimedwait: got %d, sent by a program: %s\n", r, si.si_code <= 0 ? "yes" : "no");
	r = sigtimedwait(&set, &si, &ts);
	printf("sigtimedwait: nothing pending: %d (%s)\n", r, errno == EAGAIN ? "EAGAIN" : "?");
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void on_fp(int sig)
{
	volatile double x = 1.0;
	int i;

	for (i = 0; i < 100; i++)
		x = x * 1.5 - 0.25;
	hits++;
}

static void check_fpu(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	double a = 0, b = 0;
	long i;

	hits = 0;
	handle(SIGALRM, on_fp, 0);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 20000000 && hits < 20; i++)
		a += 0.5;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	for (b = 0; i > 0; i--)
		b += 0.5;
	printf("fpu: handlers ran: %s, sums equal: %s\n", hits ? "yes" : "no", a == b ? "yes" : "no");
}

static void on_round(int sig)
{
	fesetround(FE_UPWARD);
	where_ok = fegetround() == FE_UPWARD;
}

/*
 * A handler changes the rounding mode; the one it interrupted must be back
 * after it. The alternate stack's top moves by 64 bytes through a page, so
 * the frame's FPU state sits at every place in it, across a page boundary too.
 */
static void check_fpu_frames(void)
{
	int offset, kept = 0;

	handle(SIGUSR2, on_round, SA_ONSTACK);
	for (offset = 0; offset < 4096; offset += 64) {
		stack_t ss = { .ss_sp = page_stacks, .ss_size = 8192 + offset };

		sigaltstack(&ss, NULL);
		fesetround(FE_DOWNWARD);
		where_ok = 0;
		raise(SIGUSR2);
		kept += where_ok && fegetround() == FE_DOWNWARD;
		fesetround(FE_TONEAREST);
		ss.ss_flags = SS_DISABLE;
		sigaltstack(&ss, NULL);
	}
	printf("fpu: rounding mode back after the handler, frames at 64 places in a page: %d\n", kept);
}

static void *late_writer(void *arg)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	sigset_t all;

	/* The alarm is for the reader. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	nanosleep(&ts, NULL);
	if (write(*(int *)arg, "x", 1) != 1)
		abort();
	return NULL;
}

/*
 * A blocking read on a pipe, interrupted by SIGALRM 50 ms in: restarted
 * with SA_RESTART, EINTR without.
 */
static void check_restart(int flags, const char *name)
{
	struct itimerval it = { { 0, 0 }, { 0, 50000 } };
	pthread_t t;
	int fds[2];
	char c;
	ssize_t r;

	hits = 0;
	if (pipe(fds))
		abort();
	handle(SIGALRM, on_signal, flags);
	pthread_create(&t, NULL, late_writer, &fds[1]);
	setitimer(ITIMER_REAL, &it, NULL);
	r = read(fds[0], &c, 1);
	printf("%s: read returned %zd%s after the handler ran %d time\n", name, r,
	       r < 0 && errno == EINTR ? " (EINTR)" : "", hits);
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
}

static volatile sig_atomic_t timer_ok;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	hits++;
	handler_tid = gettid();
	timer_ok = si->si_code == SI_TIMER && si->si_value.sival_int == 42;
}

static void *timer_target(void *arg)
{
	*(volatile pid_t *)arg = gettid();
	while (!hits)
		;
	return NULL;
}

/* POSIX timers: to the process with its value, to one thread, deleted. */
static void check_posix_timers(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } }, left;
	volatile pid_t tid = 0;
	sigset_t none;
	pthread_t t;
	timer_t id;

	sigemptyset(&none);
	handle_info(SIGUSR2, on_timer);
	ev.sigev_value.sival_int = 42;
	hits = 0;
	timer_create(CLOCK_MONOTONIC, &ev, &id);
	timer_settime(id, 0, &its, NULL);
	while (hits < 3)
		sigsuspend(&none);
	timer_gettime(id, &left);
	printf("timer_create: %d expiries, SI_TIMER with its value: %s, still armed: %s\n", hits,
	       timer_ok ? "yes" : "no", left.it_value.tv_nsec || left.it_value.tv_sec ? "yes" : "no");
	timer_delete(id);
	printf("timer_delete: then timer_gettime fails: %s\n",
	       timer_gettime(id, &left) < 0 && errno == EINVAL ? "EINVAL" : "no");

	hits = 0;
	handler_tid = 0;
	pthread_create(&t, NULL, timer_target, (void *)&tid);
	while (!tid)
		;
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev._sigev_un._tid = tid;
	timer_create(CLOCK_REALTIME, &ev, &id);
	its.it_interval.tv_nsec = 0;
	timer_settime(id, 0, &its, NULL);
	pthread_join(t, NULL);
	printf("timer to a thread: ran in that thread: %s\n", handler_tid == tid ? "yes" : "no");
	timer_delete(id);
	signal(SIGUSR2, SIG_DFL);
}

static void on_term(int sig) { hits = sig; }

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "wait")) {
		hits = 0;
		handle_info(SIGUSR1, on_info);
		printf("waiting pid %d\n", getpid());
		while (!hits)
			pause();
		printf("wait: got SIGUSR1 from another program: %s\n", sender_pid > 0 ? "yes" : "no");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "send")) {
		int r = kill(atoi(argv[2]), SIGUSR1);

		printf("send: kill returned %d\n", r);
		return r != 0;
	}
	if (argc == 2 && !strcmp(argv[1], "term")) {
		handle(SIGTERM, on_term, 0);
		printf("term: ready\n");
		while (!hits)
			pause();
		printf("term: handled signal %d\n", hits);
		return 3;
	}
	check_alarm();
	check_itimer();
	check_threads();
	check_faults();
	check_altstack();
	check_siginfo_and_masks();
	check_sigtimedwait();
	check_fpu();
	check_fpu_frames();
	check_restart(SA_RESTART, "SA_RESTART");
	check_restart(0, "no SA_RESTART");
	check_posix_timers();
	printf("signals: done\n");
	return 0;
}
