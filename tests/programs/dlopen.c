// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loads libraries at run time, as MPI and OpenMP runtimes load their
 * plugins: a library of ours by path (with a constructor), one of the
 * system's by name (libm), and one that does not exist.
 * usage: dlopen PATH-TO-libplugin.so
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *plugin, *libm;

	if (argc != 2)
		return 2;
	plugin = dlopen(argv[1], RTLD_NOW);
	int (*answer)(int) = plugin ? (int (*)(int))dlsym(plugin, "plugin_answer") : NULL;

	printf("plugin: %s, answer %d\n", plugin ? "loaded" : dlerror(), answer ? answer(2) : -1);

	libm = dlopen("libm.so.6", RTLD_LAZY);
	double (*cosine)(double) = libm ? (double (*)(double))dlsym(libm, "cos") : NULL;

	printf("libm: %s, cos(0) = %.1f\n", libm ? "loaded" : dlerror(), cosine ? cosine(0) : -1);

	printf("missing: %s\n", dlopen("libatoll-no-such.so", RTLD_NOW) ? "loaded?" : "not found");
	if (plugin)
		dlclose(plugin);
	return !(plugin && libm && answer && cosine);
}
