// SPDX-License-Identifier: GPL-2.0-only
/*
 * A buffer unmapped while a delegated call still writes it: one thread
 * reads /dev/zero into 32 MiB (twice) while the main thread unmaps that
 * buffer and maps and fills 32 MiB of its own. The new memory must hold only its own
 * bytes: the frames of the old buffer may not be reused while `atoll run`
 * can still write them through its mirror (the read itself may end short,
 * or with EFAULT, as on Linux). The new memory is placed away from the old
 * buffer's addresses: a read still running when those addresses are mapped
 * again writes the new mapping, on Linux as well.
 *   unmap_inflight ROUNDS     prints a line per round, then intact or CORRUPTED
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (32L << 20)

static char *buf;
static volatile int reading;

static void *reader(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	/*
	 * The first read leaves every page of buf mapped in the mirror, so
	 * the second writes them without a fault: after the unmap, only the
	 * guard keeps it from writing frames given to someone else.
	 */
	if (read(fd, buf, SIZE) != SIZE)
		reading = 3;
	else
		reading = 1;
	if (read(fd, buf, SIZE) < 0)
		reading = 2;	/* EFAULT once unmapped: fine */
	close(fd);
	return NULL;
}

static void *map(int prot)
{
	void *p = mmap(NULL, SIZE, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4, bad = 0;

	for (int r = 0; r < rounds; r++) {
		pthread_t t;
		long foreign = 0;
		char *mine = map(PROT_NONE);	/* reserved: no memory yet */

		buf = map(PROT_READ | PROT_WRITE);
		memset(buf, 1, SIZE);
		reading = 0;
		pthread_create(&t, NULL, reader, NULL);
		while (!reading)
			;
		usleep(2000);
		munmap(buf, SIZE);
		if (mprotect(mine, SIZE, PROT_READ | PROT_WRITE)) {
			perror("mprotect");
			return 1;
		}
		memset(mine, 0x55, SIZE);
		pthread_join(t, NULL);
		if (reading == 3) {
			printf("round %d: the first read ended short\n", r);
			bad++;
		}
		for (long i = 0; i < SIZE; i++)
			foreign += mine[i] != 0x55;
		printf("round %d: foreign bytes in new memory: %ld\n", r, foreign);
		bad += foreign != 0;
		munmap(mine, SIZE);
	}
	printf("%s\n", bad ? "CORRUPTED" : "intact");
	return bad != 0;
}
