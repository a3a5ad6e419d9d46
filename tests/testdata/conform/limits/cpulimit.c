/* RLIMIT_CPU, as LTP's setrlimit06 checks it: at the soft limit the
 * process gets SIGXCPU and the soft limit moves a second on (Linux raises
 * rlim_cur), so SIGXCPU comes every second of CPU time; at the hard limit
 * SIGKILL. Unhandled, SIGXCPU ends the process. Each case runs in a fork
 * child that spins; the parent prints what happened. */
#include "../conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* seen[0] counts SIGXCPUs; seen[i] is rlim_cur in the i-th handler. */
static volatile long *seen;

static void xcpu(int sig) {
	(void)sig;
	struct rlimit l;
	getrlimit(RLIMIT_CPU, &l);
	long i = ++seen[0];
	if (i < 8)
		seen[i] = (long)l.rlim_cur;
}

/* child sets RLIMIT_CPU and spins for at most 20 s of wall time. */
static pid_t child(rlim_t soft, rlim_t hard, int handled) {
	pid_t pid = fork();
	if (pid == 0) {
		if (handled)
			signal(SIGXCPU, xcpu);
		struct rlimit l = {soft, hard};
		if (setrlimit(RLIMIT_CPU, &l) < 0)
			_exit(1);
		alarm(20);
		for (;;)
			;
	}
	return pid;
}

static void report(const char *name, pid_t pid) {
	int st;
	waitpid(pid, &st, 0);
	char line[80];
	snprintf(line, sizeof line, "%s: child ended by", name);
	SHOW(line, "%s", WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "exit");
}

int main(void) {
	seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	report("soft 1 hard 3, handled", child(1, 3, 1));
	SHOW("SIGXCPUs", "%ld", seen[0]);
	SHOW("soft limit seen in the handlers", "%ld %ld", seen[1], seen[2]);

	seen[0] = 0;
	report("soft 1 hard 2, handled", child(1, 2, 1));
	SHOW("SIGXCPUs", "%ld", seen[0]);

	seen[0] = 0;
	report("soft 1 unlimited, default action", child(1, RLIM_INFINITY, 0));
	SHOW("SIGXCPUs", "%ld", seen[0]);

	/* The limit is inherited: a child of a limited process is stopped too. */
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit l = {1, 1};
		setrlimit(RLIMIT_CPU, &l);
		pid_t grandchild = fork();
		if (grandchild == 0) {
			alarm(20);
			for (;;)
				;
		}
		int st;
		waitpid(grandchild, &st, 0);
		_exit(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	SHOW("inherited limit kills the grandchild", "%d", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}
