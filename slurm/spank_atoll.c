// SPDX-License-Identifier: GPL-2.0-only
/*
 * Slurm SPANK plugin: jobs in Atoll enclaves.
 *
 *   srun --atoll-cpus=2 --atoll-mem=512M ./app
 *
 * On each node of the step, slurmstepd (as root) creates an enclave owned by
 * the job's user alone (`atoll create --owner uid`) on N of the CPUs Slurm
 * gave the step there (never others'), each task then runs its
 * program in it (`atoll run`, exec'd in place of the program, so the task's
 * exit status and signals are the program's), and when the step ends, also
 * when it is cancelled or fails, the enclave is destroyed and every CPU and
 * byte goes back to Linux. Steps without the options run on Linux as before.
 * With sbatch, the options apply to each srun step of the script (Slurm
 * passes them on); the batch script itself runs on Linux.
 *
 * plugstack.conf:  required /usr/local/lib/atoll/spank_atoll.so [atoll=/usr/local/bin/atoll]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(atoll, 1);

static char atoll_cli[256] = "/usr/local/bin/atoll";
static char cpus[64];
static char mem[64];
static char enclave[64];	/* set once this step's enclave exists */

static int opt_cpus(int val, const char *optarg, int remote);
static int opt_mem(int val, const char *optarg, int remote);

struct spank_option spank_options[] = {
	{ "atoll-cpus", "N",
	  "Run the step's tasks in an Atoll enclave of N of the step's CPUs on each node",
	  1, 0, opt_cpus },
	{ "atoll-mem", "SIZE",
	  "Memory of the Atoll enclave on each node (e.g. 512M; multiples of 128M)",
	  1, 0, opt_mem },
	SPANK_OPTIONS_TABLE_END
};

/*
 * Digits and the few signs a count, list or size has: the value goes to
 * the CLI's argv, not a shell, but it should hold no surprises either.
 */
static int plain(const char *s)
{
	if (!s || !*s || strlen(s) >= 64)
		return 0;
	for (; *s; s++)
		if (!strchr("0123456789,-kKmMgGiB", *s))
			return 0;
	return 1;
}

static int opt_cpus(int val, const char *optarg, int remote)
{
	if (!plain(optarg) || strspn(optarg, "0123456789") != strlen(optarg) || !atoi(optarg)) {
		slurm_error("atoll: --atoll-cpus wants a count of CPUs, not '%s'",
			    optarg ? optarg : "");
		return -1;
	}
	snprintf(cpus, sizeof(cpus), "%s", optarg);
	return 0;
}

static int opt_mem(int val, const char *optarg, int remote)
{
	if (!plain(optarg)) {
		slurm_error("atoll: --atoll-mem wants a size such as 512M, not '%s'",
			    optarg ? optarg : "");
		return -1;
	}
	snprintf(mem, sizeof(mem), "%s", optarg);
	return 0;
}

/*
 * The enclave's CPUs: the highest `want` of the cores Slurm gave this step
 * on this node (S_STEP_ALLOC_CORES, e.g. "1-2,5"), as the CLI's list
 * ("2-2,5-5"); CPU 0 stays Linux's. -1 with the reason logged if the step
 * has fewer.
 */
static int step_cpus(spank_t sp, int want, char *list, size_t len)
{
	char *cores = NULL, *p, *end;
	int have[1024], n = 0, a, b, used = 0;

	if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) || !cores)
		return -1;
	for (p = cores; *p; p = *end ? end + 1 : end) {
		a = strtol(p, &end, 10);
		b = *end == '-' ? strtol(end + 1, &end, 10) : a;
		if (end == p || (*end && *end != ','))
			return -1;
		for (; a <= b && n < 1024; a++)
			if (a > 0)
				have[n++] = a;
	}
	if (want > n) {
		slurm_error("atoll: --atoll-cpus=%d, but the step has %d CPU%s for an enclave on this node (%s; CPU 0 stays Linux's): ask for more with -n or -c",
			    want, n, n == 1 ? "" : "s", cores);
		return -1;
	}
	list[0] = 0;
	for (a = n - want; a < n; a++)
		used += snprintf(list + used, len - used, "%s%d-%d", used ? "," : "", have[a],
				 have[a]);
	return used < (int)len ? 0 : -1;
}

/* Runs the atoll CLI with argv and waits; 0 when it succeeded. */
static int run_atoll(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(atoll_cli, argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++)
		if (!strncmp(av[i], "atoll=", 6))
			snprintf(atoll_cli, sizeof(atoll_cli), "%s", av[i] + 6);
	/* sbatch and salloc only pass the options on: register them there too. */
	if (spank_context() == S_CTX_ALLOCATOR)
		for (i = 0; spank_options[i].name; i++)
			spank_option_register(sp, &spank_options[i]);
	return 0;
}

/*
 * Checks the options (in srun, and again remotely); in slurmstepd, as root,
 * before the tasks start: the step's enclave.
 */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t job, step;
	uid_t uid;
	char owner[32], list[1024];

	if (!cpus[0] && !mem[0])
		return 0;
	if (!cpus[0] || !mem[0]) {	/* in srun too, so that the user reads it */
		slurm_error("atoll: give both --atoll-cpus and --atoll-mem");
		return -1;
	}
	if (!spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) || spank_get_item(sp, S_JOB_STEPID, &step) ||
	    spank_get_item(sp, S_JOB_UID, &uid))
		return -1;
	/* The batch script and the allocation itself stay on Linux. */
	if (step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT ||
	    step == SLURM_INTERACTIVE_STEP)
		return 0;
	if (step_cpus(sp, atoi(cpus), list, sizeof(list)))
		return -1;
	snprintf(enclave, sizeof(enclave), "slurm%u.%u", job, step);
	snprintf(owner, sizeof(owner), "%u", (unsigned int)uid);	/* alone: no group */
	{
		char *argv[] = { "atoll", "create", "--cpus", list, "--mem", mem, "--name", enclave,
				 "--owner", owner, NULL };

		if (run_atoll(argv)) {
			slurm_error("atoll: could not create enclave %s (%s CPUs, %s), see slurmd's log",
				    enclave, cpus, mem);
			enclave[0] = 0;
			return -1;
		}
	}
	slurm_info("atoll: job %u step %u runs in enclave %s", job, step, enclave);
	return 0;
}

/* In each task, as the user, just before its program: run it in the enclave instead. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	int argc, i;
	char **argv, **env, **wrapped;

	if (!enclave[0])
		return 0;
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) || spank_get_item(sp, S_JOB_ENV, &env))
		return -1;
	wrapped = calloc(argc + 5, sizeof(*wrapped));
	if (!wrapped)
		return -1;
	wrapped[0] = "atoll";
	wrapped[1] = "run";
	wrapped[2] = enclave;
	wrapped[3] = "--";
	for (i = 0; i < argc; i++)
		wrapped[4 + i] = argv[i];
	execve(atoll_cli, wrapped, env);	/* the task's environment, as its program would get */
	slurm_error("atoll: cannot run %s: %m", atoll_cli);
	free(wrapped);
	return -1;
}

/*
 * In slurmstepd when the step ends, however it ends: the enclave goes. It
 * is root's first, so that if it cannot go (a process of the user still
 * holds a program of it), the user keeps no access to it after the job.
 */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	char *chown[] = { "atoll", "chown", enclave, "0", NULL };
	char *destroy[] = { "atoll", "destroy", "--force", enclave, NULL };

	if (!spank_remote(sp) || !enclave[0])
		return 0;
	if (run_atoll(chown) || run_atoll(destroy))
		slurm_error("atoll: could not destroy enclave %s: it stays, root's, until an administrator destroys it",
			    enclave);
	enclave[0] = 0;
	return 0;
}
