// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmap of files: private mappings (whole file, at an offset, past the end
 * of the file), read-only shared ones, writes to a private mapping that
 * stay out of the file, writes to a shared one that reach it (at msync,
 * munmap, MAP_FIXED over it and a child's exit, with the mapped descriptor
 * closed, with every other descriptor closed, and through an O_APPEND
 * one), and what cannot be mapped (a pipe, an unaligned offset). Prints
 * one line per check; the same output on Linux and in an enclave.
 * usage: filemap DIR
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define PAGE 4096
#define SIZE (3 * PAGE + 100)	/* the last page is partly past the end */

static char expected(long i)
{
	return 'a' + i % 23;
}

/* Whether the file has `what` at `at`. */
static const char *file_has(int fd, const char *what, off_t at)
{
	char buf[16] = "";

	return pread(fd, buf, strlen(what), at) == (ssize_t)strlen(what) &&
	       !memcmp(buf, what, strlen(what)) ? "yes" : "no";
}

/* A shared writable mapping of a descriptor closed at once. */
static char *map_shared(const char *path)
{
	int fd = open(path, O_RDWR);
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p;
}

static void shared_writes(const char *path, int fd)
{
	struct stat st;
	char *p = map_shared(path);
	const char *synced;
	pid_t pid;

	memcpy(p + 10, "MSYNC", 5);
	synced = msync(p, PAGE, MS_SYNC) ? errno_name(errno) : "ok";
	printf("shared write, msync: %s, file has it %s\n", synced, file_has(fd, "MSYNC", 10));
	memcpy(p + PAGE + 10, "UNMAP", 5);
	munmap(p, 4 * PAGE);
	fstat(fd, &st);
	printf("shared write, munmap: file has it %s, size kept %s\n",
	       file_has(fd, "UNMAP", PAGE + 10), st.st_size == SIZE ? "yes" : "no");
	/*
	 * Closing every other descriptor (as daemons and spawn helpers do)
	 * loses no mapping's writes; neither does trying to replace one.
	 */
	p = map_shared(path);
	for (int other = 3; other < 1024; other++)
		if (other != fd)
			close(other);
	memcpy(p + PAGE + 20, "CLOSED", 6);
	munmap(p, 4 * PAGE);
	printf("shared write, every other descriptor closed: file has it %s\n",
	       file_has(fd, "CLOSED", PAGE + 20));
	p = map_shared(path);
	memcpy(p + 2 * PAGE + 20, "FIXED", 5);
	mmap(p, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	munmap(p, 4 * PAGE);
	printf("shared write, replaced by MAP_FIXED: file has it %s\n", file_has(fd, "FIXED", 2 * PAGE + 20));
	/* The mapping writes at its offsets whatever the descriptor's flags. */
	pid = open(path, O_RDWR | O_APPEND);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, pid, 0);
	fcntl(pid, F_SETFL, O_APPEND);
	close(pid);
	memcpy(p + 30, "APPEND", 6);
	munmap(p, PAGE);
	fstat(fd, &st);
	printf("shared write through an O_APPEND descriptor: file has it %s, size kept %s\n",
	       file_has(fd, "APPEND", 30), st.st_size == SIZE ? "yes" : "no");
	pid = fork();
	if (pid == 0) {
		p = map_shared(path);
		memcpy(p + 2 * PAGE + 10, "CHILD", 5);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("shared write, a child's exit: file has it %s\n", file_has(fd, "CHILD", 2 * PAGE + 10));
	pid = open(path, O_RDONLY);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, pid, 0);
	printf("shared writable of a read-only descriptor: %s\n",
	       p == MAP_FAILED ? errno_name(errno) : "mapped");
	close(pid);
	/* The bytes as they were, for the checks after. */
	for (long i = 10; i < 36; i++)
		for (long page = 0; page < 3; page++) {
			char c = expected(page * PAGE + i);

			pwrite(fd, &c, 1, page * PAGE + i);
		}
}

int main(int argc, char **argv)
{
	char path[4096], buf[16];
	int fd, pipefd[2];
	char *p;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/filemap.data", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (long i = 0; i < SIZE; i++) {
		char c = expected(i);

		if (write(fd, &c, 1) != 1)
			return 3;
	}

	p = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	int same = p != MAP_FAILED;

	for (long i = 0; same && i < SIZE; i++)
		same = p[i] == expected(i);
	int zero = p != MAP_FAILED;

	for (long i = SIZE; zero && i < 4 * PAGE; i++)
		zero = p[i] == 0;
	printf("private, whole file: same bytes %s, zero past the end %s\n",
	       same ? "yes" : "no", zero ? "yes" : "no");
	munmap(p, 4 * PAGE);

	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 2 * PAGE);
	printf("private at offset 2 pages: first byte %s\n",
	       p != MAP_FAILED && p[0] == expected(2 * PAGE) ? "right" : "wrong");
	memset(p, 'Z', 10);
	pread(fd, buf, 10, 2 * PAGE);
	printf("write to a private mapping: mapping changed %s, file changed %s\n",
	       p[0] == 'Z' ? "yes" : "no", buf[0] == 'Z' ? "yes" : "no");
	munmap(p, PAGE);

	/* A fixed mapping over part of another, as ld.so maps libraries. */
	p = mmap(NULL, 3 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	char *q = mmap(p + PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 2 * PAGE);

	printf("fixed over another: at the hint %s, bytes from offset 2 pages %s, neighbours kept %s\n",
	       q == p + PAGE ? "yes" : "no", q[1] == expected(2 * PAGE + 1) ? "yes" : "no",
	       p[5] == expected(5) && p[2 * PAGE + 7] == expected(2 * PAGE + 7) ? "yes" : "no");
	munmap(p, 3 * PAGE);

	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
	printf("shared read-only: %s\n", p != MAP_FAILED && p[3] == expected(PAGE + 3) ? "right" : "wrong");
	munmap(p, PAGE);

	shared_writes(path, fd);

	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 100);
	printf("unaligned offset: %s\n", p == MAP_FAILED ? errno_name(errno) : "mapped");
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 999, 0);
	printf("closed descriptor: %s\n", p == MAP_FAILED ? errno_name(errno) : "mapped");
	if (pipe(pipefd) == 0) {
		p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, pipefd[0], 0);
		printf("a pipe: %s\n", p == MAP_FAILED ? (errno == ENODEV ? "ENODEV" : errno_name(errno)) : "mapped");
	}
	close(fd);
	unlink(path);
	return check_failures;
}
