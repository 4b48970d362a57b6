// SPDX-License-Identifier: GPL-2.0-only
/*
 * Processes as a program sees them; prints the same lines on Linux and in
 * an enclave: fork and wait statuses, getppid, copied memory, a pipe
 * between parent and child, SIGCHLD, WNOHANG, vfork (the child runs on
 * the parent's memory: its writes and mappings are the parent's, its pid
 * and its end its own), rusage of children,
 * process groups, read-only pages shared by a fork until one side writes
 * or drops its copy.
 * `fork bomb N` forks until fork fails (at most N children), then ends
 * them all and reports how fork failed.
 * `fork later` checks that a child has its parent's files as they were at
 * the fork, whenever it first uses them, also after its parent ended.
 * `fork quiet N` forks N children that exit at once, waiting for each.
 * `fork exec-vdso` forks a child that reads the clock (through the vDSO
 * it inherited) and execs /extra/vdso; exits with the child's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int global = 1;
static volatile sig_atomic_t chld;

static void on_chld(int sig) { chld++; }

static void statuses(void)
{
	int st, r;
	pid_t pid = fork();

	if (pid == 0)
		_exit(7);
	r = waitpid(pid, &st, 0);
	printf("wait: pid matches: %s, exited: %d, code %d\n", r == pid ? "yes" : "no",
	       WIFEXITED(st), WEXITSTATUS(st));
	pid = fork();
	if (pid == 0) {
		kill(getpid(), SIGTERM);
		pause();
	}
	waitpid(pid, &st, 0);
	printf("wait: killed: %d, by signal %d\n", WIFSIGNALED(st), WTERMSIG(st));
	/* Any child: wait() and waitpid(-1) (pid -1 as a 32-bit pid_t). */
	pid = fork();
	if (pid == 0)
		_exit(5);
	r = wait(&st);
	printf("wait: any child: pid matches: %s, code %d\n", r == pid ? "yes" : "no",
	       WEXITSTATUS(st));
	pid = fork();
	if (pid == 0)
		execl("/proc/self/exe", "fork", "exit", "6", (char *)NULL);
	r = waitpid(-1, &st, 0);
	printf("waitpid(-1): pid matches: %s, code %d\n", r == pid ? "yes" : "no",
	       WEXITSTATUS(st));
	r = wait(&st);
	printf("wait: no more children: %d (%s)\n", r, errno == ECHILD ? "ECHILD" : "?");
}

static void family(void)
{
	int fds[2], st;
	char buf[32] = "";
	pid_t parent = getpid(), pid;

	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		ssize_t n;

		global = 2;
		n = read(fds[0], buf, sizeof(buf) - 1);
		for (int i = 0; i < n; i++)
			buf[i] = buf[i] >= 'a' && buf[i] <= 'z' ? buf[i] - 32 : buf[i];
		if (write(fds[1], buf, n) != n)
			_exit(2);
		_exit(getppid() == parent ? 0 : 1);
	}
	if (write(fds[0 + 1], "hello child", 11) != 11)
		abort();
	waitpid(pid, &st, 0);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = 0;
	printf("pipe: the child answered \"%s\"\n", buf);
	printf("getppid: the child saw its parent: %s\n", WEXITSTATUS(st) == 0 ? "yes" : "no");
	printf("memory: the parent's copy unchanged: %d\n", global);
	close(fds[0]);
	close(fds[1]);
}

static void sigchld_and_nohang(void)
{
	struct sigaction sa = { .sa_handler = on_chld };
	int fds[2], st;
	char c;
	pid_t pid;

	sigaction(SIGCHLD, &sa, NULL);
	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		if (read(fds[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	printf("WNOHANG: nothing yet: %d\n", waitpid(pid, &st, WNOHANG));
	if (write(fds[1], "x", 1) != 1)
		abort();
	waitpid(pid, &st, 0);
	printf("SIGCHLD: handler ran: %s\n", chld > 0 ? "yes" : "no");
	signal(SIGCHLD, SIG_DFL);
	close(fds[0]);
	close(fds[1]);
}

static void vfork_and_usage(void)
{
	struct rusage ru;
	struct tms t;
	int st;
	pid_t pid = vfork();

	if (pid == 0)
		_exit(5);
	waitpid(pid, &st, 0);
	printf("vfork: code %d\n", WEXITSTATUS(st));
	pid = fork();
	if (pid == 0) {
		volatile unsigned long x = 0;

		for (unsigned long i = 0; i < 30000000; i++)
			x += i;
		_exit(0);
	}
	waitpid(pid, &st, 0);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("rusage: children's time counted: %s\n",
	       ru.ru_utime.tv_sec || ru.ru_utime.tv_usec ? "yes" : "no");
	times(&t);
	printf("times: children's ticks counted: %s\n", t.tms_cutime + t.tms_cstime > 0 ? "yes" : "no");
}

/*
 * A vfork child runs on its parent's memory until it execs or ends: what
 * it writes to a global, the caller's stack variable and the heap (a small
 * block and one mmap'ed by malloc), and a mapping it makes itself, are the
 * parent's when it goes on. Yet the child is a process of its own: its
 * pid, and its end by a signal, which the parent's wait reports.
 */
static int vfork_global = 1;
static int *vfork_mapped;

static void vfork_shares_memory(void)
{
	volatile int on_stack = 1;
	volatile int *small = malloc(sizeof(int));
	size_t big_len = 8 << 20;
	volatile char *big = malloc(big_len);
	pid_t parent = getpid(), pid;
	int st;

	if (!small || !big)
		abort();
	*small = 1;
	memset((char *)big, 1, big_len);
	vfork_mapped = NULL;
	pid = vfork();
	if (pid == 0) {
		int *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);

		vfork_global = 2;
		on_stack = 3;
		*small = 4;
		big[0] = 5;
		big[big_len - 1] = 6;
		if (page != MAP_FAILED) {
			*page = 7;
			vfork_mapped = page;
		}
		_exit(getpid() != parent && getppid() == parent ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	printf("vfork: the child's writes seen by the parent: global %d, stack %d, heap %d, "
	       "large block %d %d, its mapping %d\n", vfork_global, on_stack, *small, big[0],
	       big[big_len - 1], vfork_mapped ? *vfork_mapped : -1);
	printf("vfork: child a process of its own: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	if (vfork_mapped)
		munmap(vfork_mapped, 4096);
	free((void *)small);
	free((void *)big);
	pid = vfork();
	if (pid == 0) {
		kill(getpid(), SIGTERM);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("vfork: child killed: %d, by signal %d\n", WIFSIGNALED(st), WTERMSIG(st));
}

/* Process groups: inherited, a child leading its own, kill of a group. */
static void groups(void)
{
	int fds[2], st;
	char c = 0;
	pid_t pid;

	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		int own = setpgid(0, 0) == 0 && getpgrp() == getpid();

		if (write(fds[1], own ? "y" : "n", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	if (read(fds[0], &c, 1) != 1)
		abort();
	printf("groups: the child leads its own group: %s, same session: %s\n", c == 'y' ? "yes" : "no",
	       getsid(pid) == getsid(0) ? "yes" : "no");
	kill(-pid, SIGTERM);
	waitpid(pid, &st, 0);
	printf("groups: kill of the group ended it with signal %d\n", WTERMSIG(st));
	pid = fork();
	if (pid == 0)
		_exit(getpgrp() == getpgid(getppid()) ? 0 : 1);
	waitpid(pid, &st, 0);
	printf("groups: a child starts in its parent's group: %s\n", WEXITSTATUS(st) == 0 ? "yes" : "no");
	close(fds[0]);
	close(fds[1]);
}

/*
 * A child keeps its parent's heap and grows its own past what the parent
 * had mapped (64 KiB blocks come from brk).
 */
static void heap_after_fork(void)
{
	char *mine = malloc(4000);
	int st;
	pid_t pid;

	if (!mine)
		abort();
	memset(mine, 'p', 4000);
	pid = fork();
	if (pid == 0) {
		long right = 0;

		for (int i = 0; i < 4000; i++)
			right += mine[i] == 'p';
		for (int i = 0; i < 64; i++) {
			char *more = malloc(64 * 1024);

			if (!more)
				_exit(2);
			memset(more, i, 64 * 1024);
			right += more[64 * 1024 - 1] == (char)i;
		}
		_exit(right == 4000 + 64 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	printf("heap: a child kept its parent's heap and grew its own: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	free(mine);
}

static long free_bytes(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? -1 : (long)si.freeram * si.mem_unit;
}

/*
 * 1 MiB of read-only pages across a fork: each side that makes them
 * writable and writes, or drops one (MADV_DONTNEED), does it to its own
 * copy; the fork does not cost their size; FUTEX_WAKE_OP cannot write one.
 */
static void read_only_pages(void)
{
	const size_t len = 1 << 20;
	char *ro = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int go[2], st, woke;
	long before, cost;
	pid_t pid;

	if (ro == MAP_FAILED || pipe(go))
		abort();
	memset(ro, 'a', len);
	mprotect(ro, len, PROT_READ);
	before = free_bytes();
	pid = fork();
	if (pid == 0) {
		char c;
		int as_at_fork, zeroed;

		if (read(go[0], &c, 1) != 1)
			_exit(9);
		as_at_fork = ro[0] == 'a' && ro[len - 1] == 'a';
		if (mprotect(ro, len, PROT_READ | PROT_WRITE))
			_exit(8);
		ro[4096] = 'c';
		madvise(ro + 8192, 4096, MADV_DONTNEED);
		zeroed = ro[8192] == 0 && ro[8192 + 4095] == 0 && ro[4096] == 'c';
		_exit(as_at_fork | zeroed << 1);
	}
	cost = before - free_bytes();
	/* The parent writes its own copy before the child looks. */
	mprotect(ro, 4096, PROT_READ | PROT_WRITE);
	ro[0] = 'p';
	if (write(go[1], "x", 1) != 1)
		abort();
	waitpid(pid, &st, 0);
	printf("read-only: the child saw them as at the fork: %s\n", WEXITSTATUS(st) & 1 ? "yes" : "no");
	printf("read-only: the child wrote and dropped its own copy: %s\n",
	       WEXITSTATUS(st) & 2 ? "yes" : "no");
	printf("read-only: the parent's copy unchanged: %s\n",
	       ro[0] == 'p' && ro[4096] == 'a' && ro[8192] == 'a' ? "yes" : "no");
	printf("read-only: a fork costs less than half of them: %s\n",
	       pid > 0 && cost < (long)len / 2 ? "yes" : "no");
	mprotect(ro, len, PROT_READ);
	woke = syscall(SYS_futex, ro + 3 * 4096, FUTEX_WAKE_OP, 1, NULL, ro + 4 * 4096,
		       FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
	printf("read-only: FUTEX_WAKE_OP on one: %s\n",
	       woke < 0 && errno == EFAULT ? "EFAULT" : "it wrote");
	mprotect(ro + 4 * 4096, 4096, PROT_READ | PROT_WRITE);
	woke = syscall(SYS_futex, ro + 4 * 4096 + 64, FUTEX_WAKE_OP, 1, NULL, ro + 4 * 4096,
		       FUTEX_OP(FUTEX_OP_SET, 7, FUTEX_OP_CMP_EQ, 0));
	printf("read-only: FUTEX_WAKE_OP once writable: woke %d, set %d\n", woke, *(int *)(ro + 4 * 4096));
	close(go[0]);
	close(go[1]);
	munmap(ro, len);
}

static void on_usr1(int sig) { }

/*
 * The parent closes a file and opens another in its place right after the
 * fork; the child, told to look only then, still has the first one, and
 * not a descriptor the parent made later.
 */
static void files_as_at_fork(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1, old;
	char magic[4] = "";
	int keep, st;
	pid_t pid;

	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	keep = open("/proc/self/exe", O_RDONLY);
	pid = fork();
	if (pid == 0) {
		sigsuspend(&old);
		if (read(keep, magic, 4) != 4 || memcmp(magic, "\177ELF", 4))
			_exit(1);
		_exit(fcntl(50, F_GETFD) < 0 && errno == EBADF ? 0 : 2);
	}
	close(keep);
	if (open("/dev/null", O_RDONLY) != keep || dup2(keep, 50) != 50)
		abort();
	kill(pid, SIGUSR1);
	waitpid(pid, &st, 0);
	printf("later: the child read its parent's file as at the fork: %s (code %d)\n",
	       WEXITSTATUS(st) == 0 ? "yes" : "no", WEXITSTATUS(st));
	close(keep);
	close(50);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The child writes once its parent has ended (the caller waits for it). */
static int outlive_parent(void)
{
	struct timespec wait = { 0, 300 * 1000 * 1000 };

	if (fork() == 0) {
		nanosleep(&wait, NULL);
		printf("later: a child wrote after its parent ended, as parent %s\n",
		       getppid() == 1 ? "1" : "another");
		_exit(0);
	}
	printf("later: done\n");
	return 0;
}

static int quiet(int n)
{
	int st, ok = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(3);
		ok += waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 3;
	}
	printf("quiet: %d of %d children exited with 3\n", ok, n);
	return ok != n;
}

static int bomb(int most)
{
	pid_t *kids = calloc(most, sizeof(*kids));
	int n = 0, err = 0, st;

	if (!kids)
		return 1;

	while (n < most) {
		pid_t pid = fork();

		if (pid == 0) {
			pause();
			_exit(0);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], &st, 0);
	st = wait(NULL) < 0 && errno == ECHILD;
	printf("fork bomb: %s after %s children, all reaped: %s\n",
	       err == EAGAIN ? "EAGAIN" : err == ENOMEM ? "ENOMEM" : "no error",
	       n > 1 ? "some" : "no", st ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "bomb"))
		return bomb(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "exec-vdso")) {
		struct timespec t;
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			if (clock_gettime(CLOCK_MONOTONIC, &t))
				_exit(3);
			execl("/extra/vdso", "vdso", (char *)NULL);
			_exit(4);
		}
		return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 5;
	}
	if (argc == 2 && !strcmp(argv[1], "later")) {
		files_as_at_fork();
		return outlive_parent();
	}
	if (argc == 3 && !strcmp(argv[1], "quiet"))
		return quiet(atoi(argv[2]));
	statuses();
	heap_after_fork();
	read_only_pages();
	family();
	sigchld_and_nohang();
	vfork_and_usage();
	vfork_shares_memory();
	groups();
	printf("fork: done\n");
	return 0;
}
