// SPDX-License-Identifier: GPL-2.0-only
/*
 * Holds memory while the enclave is resized around it.
 *   memhog MIB DIR   maps MIB MiB, writes a pattern into all of it, says
 *       DIR/memhog.ready, waits for DIR/memhog.done, then checks every
 *       byte and prints "memhog: MIB MiB checked".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 2 ? strtoul(argv[1], NULL, 0) : 0, len = mib << 20;
	char path[512];
	unsigned char *p;

	if (!mib) {
		fprintf(stderr, "usage: memhog MIB DIR\n");
		return 2;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + (i >> 20));
	snprintf(path, sizeof(path), "%s/memhog.ready", argv[2]);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	snprintf(path, sizeof(path), "%s/memhog.done", argv[2]);
	while (access(path, F_OK))
		usleep(20000);
	for (size_t i = 0; i < len; i++) {
		if (p[i] != (unsigned char)(i * 7 + (i >> 20))) {
			printf("memhog: byte %zu changed\n", i);
			return 1;
		}
	}
	printf("memhog: %zu MiB checked\n", mib);
	return 0;
}
