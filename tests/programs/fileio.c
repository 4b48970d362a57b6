// SPDX-License-Identifier: GPL-2.0-only
/*
 * File I/O through the usual calls, relative to the current directory:
 *   fileio <workdir> <listdir>      (listdir: absolute or relative to workdir)
 *  - writes <workdir>/data.tmp with a known pseudo-random pattern (odd-sized
 *    writes), renames it to data.bin, checks fstat/stat sizes, reads it back
 *    (read, pread, lseek) and prints its FNV-1a 64 checksum;
 *  - writes <workdir>/notes.txt with stdio and reads <listdir>/input.txt;
 *  - makes <workdir>/made-here, changes into it, creates, renames and
 *    unlinks files there (only calls the enclave delegates: no rmdir, link);
 *  - lists <listdir> with opendir/readdir, sorted, one "entry <name>" line each;
 *  - prints the errno names of four failures that happen as root too:
 *    a missing file (ENOENT), execute access to a 0644 file (EACCES),
 *    a directory opened for writing (EISDIR), a regular file used as a
 *    directory (ENOTDIR).
 * Exits 1 if anything differs from what Linux does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "check.h"

#define DATA_SIZE (1048576 + 12345)	/* the pattern's length in bytes */
#define WRITE_CHUNK 4093		/* odd, so writes straddle pages */

/* The pattern: xorshift64 states from a fixed seed, little-endian, cut at DATA_SIZE. */
static void pattern(unsigned char *buf, size_t len)
{
	uint64_t s = 0x9E3779B97F4A7C15ull;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
		}
		buf[i] = (unsigned char)(s >> (8 * (i % 8)));
	}
}

static uint64_t fnv1a64(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * Insertion sort by strcmp: glibc's qsort asks sysinfo for the memory size
 * when it sorts more than 1 KiB, a call the enclave does not handle.
 */
static void sort_names(char **v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		char *x = v[i];

		for (j = i; j > 0 && strcmp(v[j - 1], x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void write_data(void)
{
	unsigned char *want = malloc(DATA_SIZE);
	size_t off = 0;
	int fd;

	pattern(want, DATA_SIZE);
	fd = openat(AT_FDCWD, "data.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0, "create data.tmp: %s", strerror(errno));
	if (fd < 0)
		exit(1);
	while (off < DATA_SIZE) {
		size_t n = DATA_SIZE - off < WRITE_CHUNK ? DATA_SIZE - off : WRITE_CHUNK;
		ssize_t w = write(fd, want + off, n);

		CHECK(w > 0, "write at %zu: %s", off, strerror(errno));
		if (w <= 0)
			exit(1);
		off += (size_t)w;
	}
	close(fd);
	CHECK(rename("data.tmp", "data.bin") == 0, "rename: %s", strerror(errno));
	free(want);
}

static void read_data(void)
{
	unsigned char *want = malloc(DATA_SIZE), *got = malloc(DATA_SIZE), buf[16];
	struct stat st;
	size_t off = 0;
	ssize_t r;
	int fd;

	pattern(want, DATA_SIZE);
	CHECK(stat("data.bin", &st) == 0 && st.st_size == DATA_SIZE, "stat data.bin");
	CHECK(stat("data.tmp", &st) == -1 && errno == ENOENT, "data.tmp still there after rename");
	fd = open("data.bin", O_RDONLY);
	CHECK(fd >= 0, "open data.bin: %s", strerror(errno));
	if (fd < 0)
		exit(1);
	CHECK(fstat(fd, &st) == 0 && st.st_size == DATA_SIZE && S_ISREG(st.st_mode), "fstat data.bin");
	while ((r = read(fd, got + off, 65536)) > 0)
		off += (size_t)r;
	CHECK(r == 0 && off == DATA_SIZE, "read back %zu bytes (r=%zd)", off, r);
	CHECK(memcmp(got, want, DATA_SIZE) == 0, "the data read back differs from what was written");
	CHECK(pread(fd, buf, sizeof(buf), 777777) == sizeof(buf) && memcmp(buf, want + 777777, sizeof(buf)) == 0,
	      "pread");
	CHECK(lseek(fd, 0, SEEK_END) == DATA_SIZE, "lseek SEEK_END");
	CHECK(lseek(fd, 100, SEEK_SET) == 100 && read(fd, buf, 1) == 1 && buf[0] == want[100], "lseek + read");
	close(fd);
	printf("data bytes=%d fnv1a64=%016llx\n", DATA_SIZE, (unsigned long long)fnv1a64(got, off));
	free(want);
	free(got);
}

static void text_files(const char *listdir)
{
	char path[4096], line[256];
	struct iovec iov[2] = { { "written ", 8 }, { "by writev\n", 10 } };
	FILE *f = fopen("notes.txt", "w");
	int i;

	CHECK(f != NULL, "fopen notes.txt: %s", strerror(errno));
	if (!f)
		exit(1);
	for (i = 1; i <= 3; i++)
		fprintf(f, "note %d of 3\n", i);
	fflush(f);
	CHECK(writev(fileno(f), iov, 2) == 18, "writev");
	fclose(f);

	snprintf(path, sizeof(path), "%s/input.txt", listdir);
	f = fopen(path, "r");
	CHECK(f != NULL, "fopen %s: %s", path, strerror(errno));
	if (f) {
		while (fgets(line, sizeof(line), f))
			printf("input %s", line);
		fclose(f);
	}
}

/* Leaves made-here/kept (5 bytes) for Linux to see; made-here/gone comes and goes. */
static void directories(void)
{
	char cwd[4096];
	int fd;

	CHECK(mkdir("made-here", 0755) == 0, "mkdir made-here: %s", strerror(errno));
	CHECK(chdir("made-here") == 0, "chdir made-here: %s", strerror(errno));
	CHECK(getcwd(cwd, sizeof(cwd)) && strlen(cwd) >= 10 && strcmp(cwd + strlen(cwd) - 10, "/made-here") == 0,
	      "getcwd in made-here");
	fd = open("kept", O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0, "create made-here/kept: %s", strerror(errno));
	CHECK(write(fd, "kept\n", 5) == 5, "write made-here/kept");
	close(fd);
	CHECK(open("kept", O_WRONLY | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST, "O_EXCL on an existing file");
	fd = open("gone", O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0, "create made-here/gone: %s", strerror(errno));
	close(fd);
	CHECK(unlink("gone") == 0, "unlink made-here/gone: %s", strerror(errno));
	CHECK(access("gone", F_OK) == -1 && errno == ENOENT, "made-here/gone still there after unlink");
	CHECK(chdir("..") == 0, "chdir ..");
}

static void list(const char *listdir)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *d;
	DIR *dir = opendir(listdir);

	CHECK(dir != NULL, "opendir %s: %s", listdir, strerror(errno));
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (n == cap)
			names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));
		names[n++] = strdup(d->d_name);
	}
	closedir(dir);
	sort_names(names, n);
	printf("entries=%zu\n", n);
	for (i = 0; i < n; i++)
		printf("entry %s\n", names[i]);
}

static void errors(void)
{
	int e_missing, e_noexec, e_dirwrite, e_notdir;

	e_missing = open("no-such-file", O_RDONLY) == -1 ? errno : 0;
	e_noexec = access("data.bin", X_OK) == -1 ? errno : 0;	/* no x bit: even root may not */
	e_dirwrite = open(".", O_WRONLY) == -1 ? errno : 0;
	e_notdir = open("data.bin/x", O_RDONLY) == -1 ? errno : 0;
	printf("error missing=%s noexec=%s dirwrite=%s notdir=%s\n", errno_name(e_missing),
	       errno_name(e_noexec), errno_name(e_dirwrite), errno_name(e_notdir));
	printf("strerror missing: %s\n", strerror(e_missing));
	printf("strerror noexec: %s\n", strerror(e_noexec));
	CHECK(e_missing == ENOENT && e_noexec == EACCES && e_dirwrite == EISDIR && e_notdir == ENOTDIR,
	      "unexpected errno");
}

int main(int argc, char **argv)
{
	char cwd[4096];

	if (argc != 3) {
		fprintf(stderr, "usage: fileio <workdir> <listdir>\n");
		return 2;
	}
	if (chdir(argv[1])) {
		printf("FAIL: chdir %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (getcwd(cwd, sizeof(cwd)))
		printf("cwd=%s\n", cwd);

	write_data();
	read_data();
	text_files(argv[2]);
	directories();
	list(argv[2]);
	errors();
	printf("fileio: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures ? 1 : 0;
}
