// SPDX-License-Identifier: GPL-2.0-only
/*
 * The smallest program: one line naming itself, its C library and how it
 * was linked.  hello from /extra/hello (glibc, static)
 */
#include <elf.h>
#include <stdio.h>
#include <sys/auxv.h>

#if defined(__GLIBC__)
#define LIBC "glibc"
#else
#define LIBC "musl"	/* the only other C library the build uses */
#endif

/*
 * The linker's symbol for our own ELF header: ET_DYN means position
 * independent (static-pie), ET_EXEC a fixed-address executable. A loader
 * (AT_BASE) means dynamically linked.
 */
extern const Elf64_Ehdr __ehdr_start;

int main(int argc, char **argv)
{
	const char *linked = getauxval(AT_BASE) ? "dynamic" :
			     __ehdr_start.e_type == ET_DYN ? "static-pie" : "static";

	printf("hello from %s (%s, %s)\n", argc > 0 ? argv[0] : "?", LIBC, linked);
	return 0;
}
