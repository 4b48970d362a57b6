// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/self/maps as runtimes read it: every line in Linux's format, and
 * the line for each of the program's own addresses says what is there: its
 * code (named by its file), libc and the loader (dynamic builds), the heap,
 * the stack (and pthread_getattr_np, which finds the main stack there), the
 * vDSO, a private file mapping at an offset (device and inode from fstat),
 * a shared one, and a page made PROT_NONE inside an anonymous mapping; and
 * a forked child's, by its pid. Prints a yes/no per check, the same on Linux and in an enclave.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LINES 4096

struct line {
	unsigned long start, end, offset, inode;
	unsigned int major, minor;
	char perms[5];
	char name[PATH_MAX];
};

static struct line lines[MAX_LINES];
static int count;
static int well_formed;

/* Reads the maps file at `path` into `lines`; false if it cannot. */
static int read_maps(const char *path)
{
	char buf[PATH_MAX + 128];
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	count = 0;
	well_formed = 1;
	while (count < MAX_LINES && fgets(buf, sizeof(buf), f)) {
		struct line *l = &lines[count++];
		int at = 0;

		buf[strcspn(buf, "\n")] = 0;
		if (sscanf(buf, "%lx-%lx %4s %lx %x:%x %lu %n", &l->start, &l->end, l->perms,
			   &l->offset, &l->major, &l->minor, &l->inode, &at) < 7)
			well_formed = 0;
		/* Linux pads the name out to column 74. */
		if (buf[at] && at != 73)
			well_formed = 0;
		snprintf(l->name, sizeof(l->name), "%s", buf + at);
		if (l->start >= l->end || (count > 1 && l->start < lines[count - 2].end))
			well_formed = 0;
	}
	fclose(f);
	return count > 0;
}

static const struct line *holding(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	for (int i = 0; i < count; i++)
		if (lines[i].start <= a && a < lines[i].end)
			return &lines[i];
	return NULL;
}

static const char *yes(int ok)
{
	return ok ? "yes" : "no";
}

static int named(const struct line *l, const char *part)
{
	return l && strstr(l->name, part);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], self[64], data[] = "/tmp/procmaps.data";
	int local = 0, fd;
	struct stat st;
	pthread_attr_t attr;
	void *stack_addr;
	size_t stack_size;

	(void)argc;
	if (!realpath(argv[0], exe))
		return 1;
	fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4 * 4096) || fstat(fd, &st))
		return 2;
	char *priv = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *anon = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *heap = malloc(64);

	if (priv == MAP_FAILED || shared == MAP_FAILED || anon == MAP_FAILED || !heap)
		return 3;
	if (mprotect(anon + 4096, 4096, PROT_NONE))
		return 4;
	if (!read_maps("/proc/self/maps"))
		return 5;

	const struct line *code = holding((void *)main);
	const struct line *p = holding(priv);
	const struct line *s = holding(shared);
	const struct line *none = holding(anon + 4096);
	const struct line *before = holding(anon);
	const struct line *stack = holding(&local);

	printf("every line in Linux's format, in order: %s\n", yes(well_formed));
	printf("code: r-x, named by the program's file: %s\n",
	       yes(code && !strcmp(code->perms, "r-xp") && !strcmp(code->name, exe)));
	printf("heap: in [heap]: %s\n", yes(named(holding(heap), "[heap]")));
	printf("stack: in [stack], rw-: %s\n",
	       yes(named(stack, "[stack]") && !strcmp(stack->perms, "rw-p")));
	printf("vDSO: in [vdso]: %s\n", yes(named(holding((void *)getauxval(AT_SYSINFO_EHDR)), "[vdso]")));
	printf("private file mapping: r--p at 00001000, named, device and inode: %s\n",
	       yes(p && !strcmp(p->perms, "r--p") && p->offset == 4096 && !strcmp(p->name, data) &&
		   p->inode == st.st_ino && p->major == major(st.st_dev) &&
		   p->minor == minor(st.st_dev) && p->start == (uintptr_t)priv &&
		   p->end == (uintptr_t)priv + 2 * 4096));
	printf("shared file mapping: rw-s, named: %s\n",
	       yes(s && !strcmp(s->perms, "rw-s") && !strcmp(s->name, data)));
	printf("PROT_NONE page: its own ---p line: %s\n",
	       yes(none && !strcmp(none->perms, "---p") && none->start == (uintptr_t)anon + 4096 &&
		   none->end == (uintptr_t)anon + 2 * 4096 && before && before->end == none->start &&
		   !strcmp(before->perms, "rw-p")));
	if (getauxval(AT_BASE))
		printf("dynamic: libc and the loader named: %s\n",
		       yes(named(holding((void *)printf), "libc.so") &&
			   named(holding((void *)getauxval(AT_BASE)), "ld-linux")));
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &stack_addr, &stack_size);
	printf("pthread_getattr_np: the main stack holds a local: %s\n",
	       yes((char *)&local >= (char *)stack_addr &&
		   (char *)&local < (char *)stack_addr + stack_size &&
		   holding((char *)stack_addr + stack_size - 1) == stack));

	unsigned long first_end = lines[0].end;

	snprintf(self, sizeof(self), "/proc/%d/maps", getpid());
	printf("/proc/<getpid()>/maps: the same mappings: %s\n",
	       yes(read_maps(self) && lines[0].end == first_end));

	/* openat2 (no wrapper in glibc 2.36): struct open_how's flags first. */
	unsigned long long how[3] = { O_RDONLY, 0, 0 };
	int fd2 = syscall(SYS_openat2, AT_FDCWD, "/proc/self/maps", how, sizeof(how));
	char head[32] = "";
	int got2 = fd2 >= 0 ? read(fd2, head, sizeof(head) - 1) : -1;

	printf("openat2: the same first line: %s\n",
	       yes(got2 > 0 && strtoul(head, NULL, 16) == lines[0].start));
	if (fd2 >= 0)
		close(fd2);

	/* A child's, by its pid: a fork has its parent's mappings. */
	int ready[2], done[2];
	char c = 0;

	if (pipe(ready) || pipe(done))
		return 6;
	pid_t child = fork();

	if (child == 0) {
		munmap(anon, 4 * 4096);
		if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (child < 0 || read(ready[0], &c, 1) != 1)
		return 7;
	snprintf(self, sizeof(self), "/proc/%d/maps", (int)child);
	int got = read_maps(self);

	code = holding((void *)main);
	printf("/proc/<child>/maps: its code named, the range it unmapped gone: %s\n",
	       yes(got && code && !strcmp(code->name, exe) && !holding(anon + 4096)));
	if (write(done[1], &c, 1) != 1 || waitpid(child, NULL, 0) != child)
		return 8;
	unlink(data);
	return 0;
}
