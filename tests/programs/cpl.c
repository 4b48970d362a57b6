// SPDX-License-Identifier: GPL-2.0-only
/*
 * The privilege level a program's code runs at (CS's low two bits), from
 * main and from a thread: 0 under `atoll run --hrt`, 3 otherwise. Then
 * two threads each keep a pattern in their red zone, the 128 bytes below
 * the stack pointer that a leaf function may use without moving it, while
 * they spin long enough to be interrupted and switched: at CPL 0 the CPU
 * would push an interrupt's frame there unless the kernel moves it.
 *   cpl [spin-iterations]   (default 100000000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long spins = 100000000;

static int cpl(void)
{
	unsigned short cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

/* Fills the red zone, spins, and counts the words that changed meanwhile. */
static long red_zone_changes(long n)
{
	long changed;

	__asm__ volatile(
		"movabs $0x9e3779b97f4a7c15, %%r8\n"
		"mov $16, %%ecx\n"
		"1: mov %%rcx, %%rax\n"
		"imul %%r8, %%rax\n"
		"mov %%rax, -136(%%rsp, %%rcx, 8)\n"
		"dec %%ecx\n"
		"jnz 1b\n"
		"mov %1, %%rdx\n"
		"2: dec %%rdx\n"
		"jnz 2b\n"
		"xor %0, %0\n"
		"mov $16, %%ecx\n"
		"3: mov %%rcx, %%rax\n"
		"imul %%r8, %%rax\n"
		"cmp %%rax, -136(%%rsp, %%rcx, 8)\n"
		"setne %%al\n"
		"movzbq %%al, %%rax\n"
		"add %%rax, %0\n"
		"dec %%ecx\n"
		"jnz 3b\n"
		: "=&r"(changed)
		: "r"(n)
		: "rax", "rcx", "rdx", "r8", "cc", "memory");
	return changed;
}

static void *thread_cpl(void *arg)
{
	*(int *)arg = cpl();
	return NULL;
}

static void *spinner(void *arg)
{
	*(long *)arg = red_zone_changes(spins);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long changed[2] = { -1, -1 };
	int in_thread = -1, i;

	if (argc > 1)
		spins = atol(argv[1]);
	if (pthread_create(&t[0], NULL, thread_cpl, &in_thread) || pthread_join(t[0], NULL))
		return 1;
	printf("cpl: main %d, thread %d\n", cpl(), in_thread);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spinner, &changed[i]))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("cpl: red zone words changed while spinning: %ld, %ld\n", changed[0], changed[1]);
	return 0;
}
