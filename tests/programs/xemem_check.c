// SPDX-License-Identifier: GPL-2.0-only
/*
 * XEMEM through xpmem.h, the same binary in an enclave and on Linux.
 *   xemem_check make NAME SIZE DIR [MODE]   makes a segment of SIZE bytes
 *       with pattern 1, waits for DIR/NAME.done, checks pattern 2 (the
 *       consumer's), removes it
 *   xemem_check attach NAME SIZE DIR        finds NAME, checks pattern 1
 *       (also through a second attachment at half the size in), writes
 *       pattern 2, detaches, says DIR/NAME.done
 *   xemem_check crash NAME SIZE DIR         makes NAME, waits for
 *       DIR/NAME.attached, then dies of SIGSEGV
 *   xemem_check watch NAME SIZE DIR         attaches NAME, says
 *       DIR/NAME.attached, reads until the mapping is revoked (a signal)
 *   xemem_check cycles N SIZE               N times: make, get, attach,
 *       check, detach, release, remove its own memory
 *   xemem_check stack                       exports 64 KiB of its main stack
 *       4 MiB below the stack pointer, where nothing touched it yet,
 *       attaches it and writes through the attachment
 *   xemem_check denied NAME                 expects get, signal and wait
 *       to be refused (EACCES)
 *   xemem_check pingpong NAME ROUNDS DIR first|second
 *                                           signalled segments: each side
 *       makes NAME.first or NAME.second, attaches the other's; first
 *       writes the round into its own and signals the other's, second
 *       waits on its own, checks the round through its attachment and
 *       signals back; prints the median round trip
 *   xemem_check hold NAME DIR               makes NAME, says ready, sleeps
 *   xemem_check timeouts NAME [DIR]         its own segment's events (with
 *       DIR: those of NAME that another program holds, after DIR/NAME.ready):
 *       waits with nothing there time out (also with no time), two signals
 *       are taken by two waits with no time, and a third wait times out
 *   xemem_check quiet NAME DIR              after DIR/NAME.ready: NAME has no
 *       event waiting (a wait with no time times out), and one signal of
 *       its own is then taken
 *   xemem_check waitgone NAME DIR           waits on NAME's events; expects
 *       EIDRM once its owner is gone
 *   xemem_check keep NAME SIZE              makes NAME (pattern 1, mode 0644),
 *       asks that it outlive this program, unmaps its buffer, fills as
 *       much fresh memory with another pattern and exits
 *   xemem_check adopt NAME SIZE             attaches a kept NAME, checks
 *       pattern 1, detaches and removes it (its owner has ended)
 *   xemem_check unremovable NAME            expects remove to be refused
 *   xemem_check attach-io NAME SIZE DIR     as attach, but through system
 *       calls: write(2) from the attachment, read(2) into it (pattern 2)
 *   xemem_check removewhile NAME SIZE DIR   makes NAME, waits for
 *       DIR/NAME.inread (the reader's read(2) waits in Linux), removes it,
 *       waits for DIR/NAME.finished, checks that its own buffer still
 *       holds pattern 1
 *   xemem_check execs NAME                  makes NAME and attaches it, then
 *       execs itself as "gone NAME"
 *   xemem_check gone NAME                   expects NAME not to be found
 *   xemem_check readrevoked NAME SIZE DIR   attaches NAME, writes it to a
 *       file, says reading, reads DIR/NAME.fifo into the attachment:
 *       expects EFAULT (the segment went while the read waited)
 * Prints one line per step and exits 0 when everything held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xpmem.h>

static unsigned char pattern(size_t i, int which)
{
	return (unsigned char)(i * 31 + (i >> 12) * 7 + which * 101);
}

static void fill(unsigned char *p, size_t size, int which)
{
	for (size_t i = 0; i < size; i++)
		p[i] = pattern(i, which);
}

/* The first byte that differs, or -1. */
static long check(const unsigned char *p, size_t size, size_t from, int which)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != pattern(from + i, which))
			return (long)i;
	return -1;
}

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static void path(char *out, const char *dir, const char *name, const char *what)
{
	snprintf(out, 512, "%s/%s.%s", dir, name, what);
}

static void say(const char *dir, const char *name, const char *what)
{
	char p[512];
	int fd;

	path(p, dir, name, what);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		die("say");
	close(fd);
}

static void await(const char *dir, const char *name, const char *what)
{
	char p[512];

	path(p, dir, name, what);
	for (int i = 0; i < 180 * 100; i++) {
		if (access(p, F_OK) == 0)
			return;
		usleep(10000);
	}
	printf("FAIL waited 180 s for %s\n", p);
	exit(1);
}

static unsigned char *memory(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static xpmem_segid_t make(const char *name, size_t size, long mode, unsigned char **buf)
{
	xpmem_segid_t segid;

	*buf = memory(size);
	fill(*buf, size, 1);
	segid = xemem_make(*buf, size, XPMEM_PERMIT_MODE, (void *)mode, name);
	if (segid < 0)
		die("xemem_make");
	return segid;
}

/* NAME's segid; dies if there is none. */
static xpmem_segid_t lookup(const char *name)
{
	xpmem_segid_t segid = xemem_lookup_segid(name);

	if (segid < 0)
		die("xemem_lookup_segid");
	return segid;
}

/* NAME's segid, once its holder says DIR/NAME.ready. */
static xpmem_segid_t held(const char *dir, const char *name)
{
	await(dir, name, "ready");
	return lookup(name);
}

static void *attach(const char *name, size_t size, xpmem_apid_t *apid)
{
	xpmem_segid_t segid = lookup(name);
	void *p;

	*apid = xpmem_get(segid, XPMEM_RDWR, XPMEM_PERMIT_MODE, NULL);
	if (*apid < 0)
		die("xpmem_get");
	p = xpmem_attach((struct xpmem_addr){ .apid = *apid, .offset = 0 }, size, NULL);
	if (p == (void *)-1)
		die("xpmem_attach");
	return p;
}

static int run_make(const char *name, size_t size, const char *dir, long mode)
{
	unsigned char *buf;
	xpmem_segid_t segid = make(name, size, mode, &buf);
	long bad;

	say(dir, name, "ready");
	await(dir, name, "done");
	bad = check(buf, size, 0, 2);
	if (bad >= 0) {
		printf("FAIL make %s: byte %ld is not the consumer's\n", name, bad);
		return 1;
	}
	if (xpmem_remove(segid))
		die("xpmem_remove");
	printf("make %s %zu: the consumer's bytes arrived, removed\n", name, size);
	return 0;
}

static int run_attach(const char *name, size_t size, const char *dir)
{
	xpmem_apid_t apid;
	unsigned char *p, *half;
	long bad;

	await(dir, name, "ready");
	p = attach(name, size, &apid);
	bad = check(p, size, 0, 1);
	if (bad >= 0) {
		printf("FAIL attach %s: byte %ld is not the producer's\n", name, bad);
		return 1;
	}
	if (size >= 2 * 4096) {
		size_t off = size / 2 & ~(size_t)4095;

		half = xpmem_attach((struct xpmem_addr){ apid, (off_t)off }, size - off, NULL);
		if (half == (void *)-1)
			die("xpmem_attach at an offset");
		if (check(half, size - off, off, 1) >= 0 || xpmem_detach(half))
			die("second attachment");
	}
	/* An attachment cannot move (a regression: a refused move once freed it). */
	void *spare = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mremap(p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, spare) != MAP_FAILED) {
		printf("FAIL attach %s: the attachment moved\n", name);
		return 1;
	}
	munmap(spare, size);
	fill(p, size, 2);
	if (xpmem_detach(p) || xpmem_release(apid))
		die("xpmem_detach/release");
	say(dir, name, "done");
	printf("attach %s %zu: the producer's bytes checked, ours written\n", name, size);
	return 0;
}

static sigjmp_buf revoked_jump;
static volatile int revoked_by;

static void on_revoked(int sig)
{
	revoked_by = sig;
	siglongjmp(revoked_jump, 1);
}

static int run_watch(const char *name, size_t size, const char *dir)
{
	xpmem_apid_t apid;
	volatile unsigned char *p;
	time_t end;

	await(dir, name, "ready");
	p = attach(name, size, &apid);
	/* The grant may go while the attachment stays (its segment's last hold then). */
	if (xpmem_release(apid))
		die("xpmem_release");
	signal(SIGSEGV, on_revoked);
	signal(SIGBUS, on_revoked);
	say(dir, name, "attached");
	end = time(NULL) + 120;
	if (sigsetjmp(revoked_jump, 1) == 0) {
		while (time(NULL) < end)
			(void)p[size - 1];
		printf("FAIL watch %s: still mapped after 120 s\n", name);
		return 1;
	}
	printf("watch %s: revoked, reading it gave %s\n", name,
	       revoked_by == SIGBUS ? "SIGBUS" : "SIGSEGV");
	return 0;
}

static int run_crash(const char *name, size_t size, const char *dir)
{
	unsigned char *buf;

	make(name, size, 0600, &buf);
	say(dir, name, "ready");
	await(dir, name, "attached");
	printf("crash %s: dying with the segment attached\n", name);
	fflush(stdout);
	raise(SIGSEGV);
	return 1;
}

/* Exports [buf, buf + size) and attaches it in this same process. */
static unsigned char *export_and_attach(void *buf, size_t size, xpmem_segid_t *segid,
					xpmem_apid_t *apid)
{
	unsigned char *p;

	*segid = xpmem_make(buf, size, XPMEM_PERMIT_MODE, (void *)0600);
	if (*segid < 0)
		die("xpmem_make");
	*apid = xpmem_get(*segid, XPMEM_RDWR, XPMEM_PERMIT_MODE, NULL);
	if (*apid < 0)
		die("xpmem_get");
	p = xpmem_attach((struct xpmem_addr){ *apid, 0 }, size, NULL);
	if (p == (void *)-1)
		die("xpmem_attach");
	return p;
}

static int run_cycles(long n, size_t size)
{
	unsigned char *buf = memory(size), *p;
	xpmem_segid_t segid;
	xpmem_apid_t apid;

	for (long i = 0; i < n; i++) {
		fill(buf, size, (int)i);
		p = export_and_attach(buf, size, &segid, &apid);
		if (check(p, size, 0, (int)i) >= 0) {
			printf("FAIL cycle %ld: the attachment shows other bytes\n", i);
			return 1;
		}
		p[0] ^= 0xff;	/* the very same frame */
		if (buf[0] != (unsigned char)(pattern(0, (int)i) ^ 0xff)) {
			printf("FAIL cycle %ld: a write through the attachment did not show\n", i);
			return 1;
		}
		if (xpmem_detach(p) || xpmem_release(apid) || xpmem_remove(segid))
			die("detach/release/remove");
	}
	printf("cycles %ld x %zu bytes: ok\n", n, size);
	return 0;
}

/* The main stack's untouched part: its frames exist once exported. */
static int run_stack(void)
{
	unsigned char here, *p;
	unsigned char *buf = (unsigned char *)(((unsigned long)&here - (4L << 20)) & ~4095UL);
	const size_t size = 64 << 10;
	xpmem_segid_t segid;
	xpmem_apid_t apid;

	p = export_and_attach(buf, size, &segid, &apid);
	fill(p, size, 3);
	printf("stack export: %s\n", check(buf, size, 0, 3) < 0 ? "same bytes" : "differs");
	if (xpmem_detach(p) || xpmem_release(apid) || xpmem_remove(segid))
		die("detach/release/remove");
	return 0;
}

static int run_denied(const char *name)
{
	xpmem_segid_t segid = lookup(name);
	int get, signal, wait;

	get = xpmem_get(segid, XPMEM_RDWR, XPMEM_PERMIT_MODE, NULL) >= 0 ? 0 : errno;
	signal = xemem_signal(segid) ? errno : 0;
	wait = xemem_wait(segid, 0) ? errno : 0;
	printf("denied %s: get %s, signal %s, wait %s\n", name, strerrorname_np(get),
	       strerrorname_np(signal), strerrorname_np(wait));
	return get == EACCES && signal == EACCES && wait == EACCES ? 0 : 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int run_pingpong(const char *name, long rounds, const char *dir, int first)
{
	char mine[128], theirs[128];
	unsigned char *buf;
	volatile long *own, *peer;
	long long *rtt = calloc(rounds, sizeof(*rtt)), t;
	xpmem_segid_t me, other;
	xpmem_apid_t apid;

	snprintf(mine, sizeof(mine), "%s.%s", name, first ? "first" : "second");
	snprintf(theirs, sizeof(theirs), "%s.%s", name, first ? "second" : "first");
	me = make(mine, 4096, 0600, &buf);
	own = (volatile long *)buf;
	say(dir, mine, "ready");
	await(dir, theirs, "ready");
	peer = attach(theirs, 4096, &apid);
	other = xemem_lookup_segid(theirs);
	for (long i = 0; i < rounds; i++) {
		if (first) {
			*own = i;
			t = now_ns();
			if (xemem_signal(other) || xemem_wait(me, 10000))
				die("first: signal/wait");
			rtt[i] = now_ns() - t;
			if (*peer != -i) {
				printf("FAIL pingpong round %ld: the answer reads %ld\n", i, *peer);
				return 1;
			}
		} else {
			if (xemem_wait(me, 10000))
				die("second: wait");
			if (*peer != i) {
				printf("FAIL pingpong round %ld: the round reads %ld\n", i, *peer);
				return 1;
			}
			*own = -i;
			if (xemem_signal(other))
				die("second: signal");
		}
	}
	say(dir, mine, "done");
	await(dir, theirs, "done");
	if (first) {
		qsort(rtt, rounds, sizeof(*rtt), by_value);
		printf("pingpong %s: %ld rounds, round trip median %lld ns, min %lld ns\n", name,
		       rounds, rtt[rounds / 2], rtt[0]);
	} else {
		printf("pingpong %s: %ld rounds answered\n", name, rounds);
	}
	return 0;
}

static int run_hold(const char *name, const char *dir)
{
	unsigned char *buf;

	make(name, 65536, 0600, &buf);
	say(dir, name, "ready");
	sleep(600);
	return 1;
}

/* 1 if xemem_wait(segid, ms) times out. */
static int times_out(xpmem_segid_t segid, int ms)
{
	errno = 0;
	return xemem_wait(segid, ms) == -1 && errno == ETIMEDOUT;
}

static int run_timeouts(const char *name, const char *dir)
{
	unsigned char *buf;
	xpmem_segid_t segid;
	int empty, later, taken, after;
	long long t;

	segid = dir ? held(dir, name) : make(name, 4096, 0600, &buf);
	empty = times_out(segid, 0);
	t = now_ns();
	/* It waited its time, at least: a wait that gives up early fails. */
	later = times_out(segid, 50) && now_ns() - t >= 50000000;

	if (xemem_signal(segid) || xemem_signal(segid))
		die("timeouts: xemem_signal");
	taken = xemem_wait(segid, 0) == 0 && xemem_wait(segid, 0) == 0;
	after = times_out(segid, 0);
	printf("timeouts %s: no time %s, 50 ms %s, two signals %s, then %s\n", name,
	       empty ? "timed out" : "FAILED", later ? "timed out" : "FAILED",
	       taken ? "taken" : "NOT taken", after ? "timed out" : "FAILED");
	if (!dir && xpmem_remove(segid))
		die("xpmem_remove");
	return empty && later && taken && after ? 0 : 1;
}

static int run_quiet(const char *name, const char *dir)
{
	xpmem_segid_t segid;
	int none, taken;

	segid = held(dir, name);
	none = times_out(segid, 0);
	taken = xemem_signal(segid) == 0 && xemem_wait(segid, 0) == 0;
	printf("quiet %s: %s, own signal %s\n", name, none ? "no event waiting" : "AN EVENT WAITED",
	       taken ? "taken" : "NOT taken");
	return none && taken ? 0 : 1;
}

static int run_waitgone(const char *name, const char *dir)
{
	xpmem_segid_t segid;

	segid = held(dir, name);
	say(dir, name, "waiting");
	if (xemem_wait(segid, 120000) == 0) {
		printf("FAIL waitgone %s: an event came\n", name);
		return 1;
	}
	printf("waitgone %s: %s\n", name, errno == EIDRM ? "EIDRM" : strerror(errno));
	return errno == EIDRM ? 0 : 1;
}

static int run_keep(const char *name, size_t size)
{
	unsigned char *buf, *fresh;
	xpmem_segid_t segid = make(name, size, 0644, &buf);

	if (xemem_keep(segid))
		die("xemem_keep");
	/* Its frames must stay the segment's, not come back for this. */
	munmap(buf, size);
	fresh = memory(size);
	fill(fresh, size, 3);
	printf("keep %s %zu: kept, unmapped, owner ends\n", name, size);
	return 0;
}

static int run_adopt(const char *name, size_t size)
{
	xpmem_apid_t apid;
	unsigned char *p = attach(name, size, &apid);
	long bad = check(p, size, 0, 1);

	if (bad >= 0) {
		printf("FAIL adopt %s: byte %ld is not its ended owner's\n", name, bad);
		return 1;
	}
	if (xpmem_detach(p) || xpmem_release(apid))
		die("xpmem_detach/release");
	if (xpmem_remove(xemem_lookup_segid(name)))
		die("xpmem_remove");
	if (xemem_lookup_segid(name) >= 0 || errno != ENOENT)
		die("still there after remove");
	printf("adopt %s %zu: its ended owner's bytes checked, removed\n", name, size);
	return 0;
}

static int run_unremovable(const char *name)
{
	xpmem_segid_t segid = lookup(name);

	if (xpmem_remove(segid) == 0) {
		printf("FAIL unremovable %s: removed\n", name);
		return 1;
	}
	printf("unremovable %s: %s\n", name, errno == EPERM ? "EPERM" : strerror(errno));
	return errno == EPERM ? 0 : 1;
}

/* write(2) of the attachment p into a new file DIR/NAME.copy: its fd. */
static int copy_out(const char *dir, const char *name, const unsigned char *p, size_t size)
{
	char file[512];
	int fd;

	path(file, dir, name, "copy");
	fd = open(file, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, size) != (ssize_t)size)
		die("write from the attachment");
	return fd;
}

static int run_attach_io(const char *name, size_t size, const char *dir)
{
	unsigned char *p, *local = memory(size);
	xpmem_apid_t apid;
	long bad;
	int fd;

	await(dir, name, "ready");
	p = attach(name, size, &apid);
	fd = copy_out(dir, name, p, size);
	if (pread(fd, local, size, 0) != (ssize_t)size)
		die("pread");
	bad = check(local, size, 0, 1);
	if (bad >= 0) {
		printf("FAIL attach-io %s: byte %ld written from it is not the producer's\n", name, bad);
		return 1;
	}
	fill(local, size, 2);
	if (pwrite(fd, local, size, 0) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
		die("pwrite");
	if (read(fd, p, size) != (ssize_t)size)
		die("read into the attachment");
	close(fd);
	if (xpmem_detach(p) || xpmem_release(apid))
		die("xpmem_detach/release");
	say(dir, name, "done");
	printf("attach-io %s %zu: written from the attachment, read into it\n", name, size);
	return 0;
}

static int run_removewhile(const char *name, size_t size, const char *dir)
{
	unsigned char *buf;
	xpmem_segid_t segid = make(name, size, 0600, &buf);
	long bad;

	say(dir, name, "ready");
	await(dir, name, "inread");
	if (xpmem_remove(segid))
		die("xpmem_remove");
	say(dir, name, "removed");
	await(dir, name, "finished");
	bad = check(buf, size, 0, 1);
	if (bad >= 0) {
		printf("FAIL removewhile %s: byte %ld changed after the remove\n", name, bad);
		return 1;
	}
	printf("removewhile %s: our bytes untouched after the remove\n", name);
	return 0;
}

static int run_readrevoked(const char *name, size_t size, const char *dir)
{
	xpmem_apid_t apid;
	unsigned char *p;
	char fifo[512];
	ssize_t n;
	int fd;

	await(dir, name, "ready");
	p = attach(name, size, &apid);
	/* A write(2) from it first: `atoll run` maps its pages now. */
	close(copy_out(dir, name, p, size));
	path(fifo, dir, name, "fifo");
	fd = open(fifo, O_RDWR);
	if (fd < 0)
		die("open the fifo");
	say(dir, name, "reading");
	n = read(fd, p, size);
	say(dir, name, "finished");
	if (n >= 0) {
		printf("FAIL readrevoked %s: read %zd bytes into a removed segment\n", name, n);
		return 1;
	}
	printf("readrevoked %s: %s\n", name, errno == EFAULT ? "EFAULT" : strerror(errno));
	return errno == EFAULT ? 0 : 1;
}

static int run_execs(const char *self, const char *name)
{
	unsigned char *buf;
	xpmem_apid_t apid;

	make(name, 65536, 0600, &buf);
	attach(name, 65536, &apid);
	execl(self, self, "gone", name, (char *)NULL);
	die("execl");
	return 1;
}

static int run_gone(const char *name)
{
	if (xemem_lookup_segid(name) >= 0 || errno != ENOENT) {
		printf("FAIL gone %s: still there after exec\n", name);
		return 1;
	}
	printf("gone %s: the old image's segment went with it\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "make"))
		return run_make(argv[2], strtoul(argv[3], NULL, 0), argv[4],
				argc > 5 ? strtol(argv[5], NULL, 8) : 0600);
	if (argc == 5 && !strcmp(argv[1], "attach"))
		return run_attach(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "watch"))
		return run_watch(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "crash"))
		return run_crash(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "cycles"))
		return run_cycles(strtol(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	if (argc == 2 && !strcmp(argv[1], "stack"))
		return run_stack();
	if (argc == 3 && !strcmp(argv[1], "denied"))
		return run_denied(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "pingpong"))
		return run_pingpong(argv[2], strtol(argv[3], NULL, 0), argv[4],
				    !strcmp(argv[5], "first"));
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return run_hold(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "quiet"))
		return run_quiet(argv[2], argv[3]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "timeouts"))
		return run_timeouts(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc == 4 && !strcmp(argv[1], "waitgone"))
		return run_waitgone(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "keep"))
		return run_keep(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "adopt"))
		return run_adopt(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "unremovable"))
		return run_unremovable(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "execs"))
		return run_execs(argv[0], argv[2]);
	if (argc == 3 && !strcmp(argv[1], "gone"))
		return run_gone(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "attach-io"))
		return run_attach_io(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "removewhile"))
		return run_removewhile(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "readrevoked"))
		return run_readrevoked(argv[2], strtoul(argv[3], NULL, 0), argv[4]);
	fprintf(stderr, "usage: see the comment at the top of xemem_check.c\n");
	return 2;
}
