// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls whose effect lives on Linux, which an enclave delegates: identity,
 * umask, pipes and poll, a socket pair, and file-system calls; and
 * sysinfo, which the LWK answers with the enclave's memory. Run in DIR;
 * prints the same on Linux and in an enclave.
 *   linuxapi DIR
 *   linuxapi --memory       the total memory sysinfo reports, in MiB
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

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
	if (pipes_and_sockets() || files())
		return 1;
	OK(sysinfo(&si));
	printf("sysinfo: %s\n", si.totalram > 0 && si.freeram <= si.totalram && si.mem_unit >= 1 &&
	       si.procs >= 1 ? "plausible" : "WRONG");
	return 0;
}
