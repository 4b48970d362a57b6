// SPDX-License-Identifier: GPL-2.0-only
/*
 * A shared library that dlopen.c loads at run time: a function, and data
 * that a constructor sets when the library is loaded.
 */
static int loaded_with;

__attribute__((constructor)) static void on_load(void)
{
	loaded_with = 40;
}

int plugin_answer(int plus)
{
	return loaded_with + plus;
}
