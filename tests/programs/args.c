// SPDX-License-Identifier: GPL-2.0-only
/*
 * The initial stack as Linux builds it: argc, argv, envp right after argv,
 * the auxiliary vector right after envp. Prints every argument, the
 * variables named ATOLL_TEST*, a few auxv entries, and exits with the
 * status given as argv[1] (0 without it).
 *   args [status [more args...]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include "check.h"

int main(int argc, char **argv, char **envp)
{
	unsigned long *auxv, pagesz_on_stack = 0;
	int i, envc = 0, status = 0;
	char **e;

	printf("argc=%d\n", argc);
	for (i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	CHECK(argv[argc] == NULL, "argv[argc] is not NULL");
	CHECK(envp == argv + argc + 1, "envp does not follow argv's NULL");

	for (e = envp; *e; e++, envc++)
		if (strncmp(*e, "ATOLL_TEST", 10) == 0)
			printf("env %s\n", *e);
	printf("envc=%d\n", envc);
	printf("getenv ATOLL_TEST_VAR=%s\n", getenv("ATOLL_TEST_VAR") ? getenv("ATOLL_TEST_VAR") : "(unset)");

	/* The auxiliary vector follows envp's NULL: (type, value) pairs up to AT_NULL. */
	for (auxv = (unsigned long *)(e + 1); auxv[0] != AT_NULL; auxv += 2)
		if (auxv[0] == AT_PAGESZ)
			pagesz_on_stack = auxv[1];
	CHECK(pagesz_on_stack == getauxval(AT_PAGESZ), "AT_PAGESZ on the stack (%lu) differs from getauxval's",
	      pagesz_on_stack);
	printf("auxv AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
	printf("auxv AT_RANDOM=%s\n", getauxval(AT_RANDOM) ? "present" : "missing");
	printf("auxv AT_PHDR=%s\n", getauxval(AT_PHDR) ? "present" : "missing");
	printf("auxv AT_ENTRY=%s\n", getauxval(AT_ENTRY) ? "present" : "missing");
	/* The System V ABI: rsp is 16-byte aligned at entry, so argv is 8 past it. */
	printf("stack argv%%16=%u\n", (unsigned int)((uintptr_t)argv % 16));

	if (argc > 1)
		status = atoi(argv[1]);
	if (check_failures)
		return 100;
	printf("exit %d\n", status);
	return status;
}
