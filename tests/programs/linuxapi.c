// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls whose effect lives on Linux, which an enclave delegates: identity,
 * umask, pipes and poll, a socket pair, and file-system calls (owners,
 * times, nodes, locks, hints, copies between descriptors, vectored I/O at
 * an offset, extended attributes, inotify); and
 * sysinfo, which the LWK answers with the enclave's memory. Run in DIR;
 * prints the same on Linux and in an enclave.
 *   linuxapi DIR
 *   linuxapi --memory       the total memory sysinfo reports, in MiB
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#define OK(call) do { if ((call) < 0) { perror(#call); return 1; } } while (0)

static long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static int pipes_and_sockets(void)
{
	struct timespec ten_ms = { 0, 10000000 };
	int p[2], q[2], sv[2], ready;
	struct pollfd pf;
	char b[8] = { 0 };

	OK(pipe(p));
	OK(write(p[1], "ping", 4));
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	ready = poll(&pf, 1, 1000);
	OK(read(p[0], b, 4));
	printf("pipe: poll=%d revents=%#x read=%s\n", ready, pf.revents, b);
	OK(pipe2(q, O_CLOEXEC));
	pf = (struct pollfd){ .fd = q[0], .events = POLLIN };
	printf("pipe2: cloexec=%d ppoll(empty, 10 ms)=%d\n", fcntl(q[0], F_GETFD) & FD_CLOEXEC,
	       ppoll(&pf, 1, &ten_ms, NULL));
	OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	OK(write(sv[0], "pong", 4));
	memset(b, 0, sizeof(b));
	OK(read(sv[1], b, 4));
	printf("socketpair: read=%s\n", b);
	return 0;
}

static int files(void)
{
	struct timespec times[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	char target[16] = { 0 }, cwd[256];
	struct stat st;
	int dfd, fd;

	OK(mkdir("d", 0755));
	OK(mkdirat(AT_FDCWD, "d/e", 0700));
	OK(dfd = open("d", O_DIRECTORY));
	OK(renameat(dfd, "e", dfd, "f"));
	OK(renameat2(dfd, "f", dfd, "g", RENAME_NOREPLACE));
	OK(unlinkat(dfd, "g", AT_REMOVEDIR));
	OK(fd = open("d/file", O_CREAT | O_RDWR, 0644));
	OK(write(fd, "0123456789012345678901234567890123456789", 40));
	OK(truncate("d/file", 10));
	printf("truncate: %ld\n", size_of("d/file"));
	OK(ftruncate(fd, 3));
	OK(fsync(fd));
	OK(fdatasync(fd));
	printf("ftruncate: %ld\n", size_of("d/file"));
	OK(chmod("d/file", 0600));
	OK(stat("d/file", &st));
	printf("chmod: %03o\n", st.st_mode & 0777);
	OK(fchmod(fd, 0640));
	OK(fchmodat(dfd, "file", 0604, 0));
	OK(stat("d/file", &st));
	printf("fchmod, fchmodat: %03o\n", st.st_mode & 0777);
	OK(link("d/file", "d/hard"));
	OK(linkat(dfd, "file", dfd, "hard2", 0));
	OK(stat("d/file", &st));
	printf("links: %ld\n", (long)st.st_nlink);
	OK(symlink("file", "d/sym"));
	OK(symlinkat("hard", dfd, "sym2"));
	OK(readlinkat(dfd, "sym", target, sizeof(target) - 1));
	printf("readlinkat: %s\n", target);
	OK(utimensat(AT_FDCWD, "d/file", times, 0));
	OK(stat("d/file", &st));
	printf("utimensat: %ld\n", (long)st.st_mtime);
	OK(fchdir(dfd));
	printf("fchdir: %s\n", strrchr(getcwd(cwd, sizeof(cwd)), '/'));
	OK(chdir(".."));
	OK(unlink("d/sym"));
	OK(unlinkat(dfd, "sym2", 0));
	OK(unlink("d/hard"));
	OK(unlink("d/hard2"));
	OK(unlink("d/file"));
	OK(close(fd));
	OK(close(dfd));
	OK(rmdir("d"));
	printf("rmdir: %s\n", access("d", F_OK) ? "gone" : "still there");
	return 0;
}

/* What a call that may fail said: "ok" or its errno's name, the same on both sides. */
static const char *said(long r)
{
	return r < 0 ? strerrorname_np(errno) : "ok";
}

static int more_files(void)
{
	struct utimbuf ub = { 2000000000, 2000000000 };
	struct timeval tv[2] = { { 1500000000, 0 }, { 1500000000, 0 } };
	struct open_how how = { .flags = O_RDONLY, .resolve = RESOLVE_BENEATH };
	char buf[64] = "", a[8] = "", b[8] = "", list[256];
	struct iovec iov[2] = { { a, 4 }, { b, 4 } };
	struct inotify_event *ev = (void *)list;
	int fd, out, in, dfd, p[2], q[2], wd;
	off_t at = 0;
	struct stat st;
	ssize_t n;

	OK(mkdir("m", 0755));
	OK(dfd = open("m", O_DIRECTORY));
	OK(in = inotify_init1(IN_CLOEXEC));
	OK(wd = inotify_add_watch(in, "m", IN_CREATE));
	OK(fd = creat("m/a", 0644));
	OK(close(fd));
	OK(fd = open("m/a", O_RDWR));
	OK(n = read(in, list, sizeof(list)));
	printf("inotify: %s %s\n", ev->mask & IN_CREATE ? "IN_CREATE" : "?", ev->name);
	OK(inotify_rm_watch(in, wd));
	OK(write(fd, "abcdefgh", 8));
	OK(chown("m/a", getuid(), getgid()));
	OK(fchown(fd, getuid(), getgid()));
	OK(lchown("m/a", getuid(), getgid()));
	OK(fchownat(dfd, "a", getuid(), getgid(), 0));
	OK(utime("m/a", &ub));
	OK(stat("m/a", &st));
	printf("utime: %ld\n", (long)st.st_mtime);
	OK(utimes("m/a", tv));
	OK(stat("m/a", &st));
	printf("utimes: %ld\n", (long)st.st_mtime);
	OK(futimesat(dfd, "a", NULL));
	OK(mknod("m/fifo", S_IFIFO | 0600, 0));
	OK(mknodat(dfd, "fifo2", S_IFIFO | 0600, 0));
	OK(stat("m/fifo", &st));
	printf("mknod: %s\n", S_ISFIFO(st.st_mode) ? "a fifo" : "?");
	sync();
	OK(syncfs(fd));
	OK(flock(fd, LOCK_EX));
	OK(flock(fd, LOCK_UN));
	printf("fadvise: %d\n", posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL));
	printf("readahead: %s\n", said(readahead(fd, 0, 4096)));
	printf("sync_file_range: %s\n", said(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)));
	printf("fallocate: %s\n", said(fallocate(fd, 0, 0, 8192)));
	OK(out = open("m/b", O_CREAT | O_RDWR | O_TRUNC, 0644));
	OK(sendfile(out, fd, &at, 4));
	printf("sendfile: offset %ld\n", (long)at);
	at = 4;
	OK(copy_file_range(fd, &at, out, NULL, 4, 0));
	OK(pread(out, buf, 8, 0));
	printf("sendfile, copy_file_range: %.8s\n", buf);
	OK(pipe(p));
	OK(pipe(q));
	at = 2;
	OK(splice(fd, &at, p[1], NULL, 3, 0));
	OK(tee(p[0], q[1], 3, 0));
	memset(buf, 0, sizeof(buf));
	OK(read(q[0], buf, 3));
	printf("splice, tee: %s\n", buf);
	OK(preadv(fd, iov, 2, 0));
	printf("preadv: %.4s %.4s\n", a, b);
	OK(pwritev2(out, iov, 2, 8, 0));
	OK(preadv2(out, iov, 1, 10, 0));
	printf("pwritev2, preadv2: %.4s\n", a);
	OK(pwritev(out, iov, 1, 0));
	printf("xattr set: %s\n", said(setxattr("m/a", "user.atoll", "v", 1, 0)));
	printf("xattr get: %s\n", said(getxattr("m/a", "user.atoll", buf, sizeof(buf))));
	printf("xattr list: %s\n", said(listxattr("m/a", list, sizeof(list))));
	printf("xattr remove: %s\n", said(fremovexattr(fd, "user.atoll")));
	OK(n = syscall(SYS_openat2, dfd, "a", &how, sizeof(how)));
	printf("openat2 beneath: ok; escaping: %s\n",
	       said(syscall(SYS_openat2, dfd, "../m/a", &how, sizeof(how))));
	OK(close(n));
	OK(n = syscall(SYS_eventfd, 3));
	OK(close(n));
	for (n = 0; n < 2; n++) {
		OK(close(p[n]));
		OK(close(q[n]));
	}
	OK(close(in));
	OK(close(out));
	OK(close(fd));
	OK(close(dfd));
	OK(unlink("m/a"));
	OK(unlink("m/b"));
	OK(unlink("m/fifo"));
	OK(unlink("m/fifo2"));
	OK(rmdir("m"));
	printf("more files: done\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sysinfo si;
	mode_t old;

	if (argc == 2 && !strcmp(argv[1], "--memory")) {
		OK(sysinfo(&si));
		printf("memory: %llu MiB\n", (unsigned long long)si.totalram * si.mem_unit >> 20);
		return 0;
	}
	if (argc != 2 || chdir(argv[1])) {
		fprintf(stderr, "usage: linuxapi DIR\n");
		return 2;
	}
	printf("ids: uid=%d gid=%d euid=%d egid=%d groups=%d\n", getuid(), getgid(), geteuid(),
	       getegid(), getgroups(0, NULL));
	old = umask(027);
	printf("umask: was %03o, now %03o\n", old, umask(022));
	if (pipes_and_sockets() || files() || more_files())
		return 1;
	OK(sysinfo(&si));
	printf("sysinfo: %s\n", si.totalram > 0 && si.freeram <= si.totalram && si.mem_unit >= 1 &&
	       si.procs >= 1 ? "plausible" : "WRONG");
	return 0;
}
