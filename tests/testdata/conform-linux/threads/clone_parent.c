/* clone(CLONE_PARENT): the child is its creator's sibling, the child of
 * its creator's parent, which waits for it and learns of its exit with
 * the creator's own exit signal, not the one clone was given; init may
 * not (it has no parent to share). LTP's clone08. */
#include "../../conform/conform.h"
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* fork_like clones with flags, the child going on on a copy of the
 * stack as after fork. */
static long fork_like(unsigned long flags) {
	return syscall(SYS_clone, flags, 0, 0, 0, 0);
}

int main(void) {
	RET("init.clone_parent", fork_like(CLONE_PARENT | SIGCHLD));

	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	pid_t me = getpid();
	int p[2];
	pipe(p);
	pid_t child = fork();
	if (child == 0) {
		long g = fork_like(CLONE_PARENT | SIGUSR1);
		if (g == 0) {
			char ok = getppid() == me ? 'y' : 'n';
			write(p[1], &ok, 1);
			_exit(7);
		}
		write(p[1], g > 0 ? "c" : "e", 1);
		_exit(3);
	}
	char got[2] = {0};
	read(p[0], &got[0], 1);
	read(p[0], &got[1], 1);
	SHOW("messages", "%d", (got[0] == 'c' && got[1] == 'y') || (got[0] == 'y' && got[1] == 'c'));

	/* Both are this process's children, reaped by a plain wait (the
	 * sibling's exit signal is SIGCHLD, as the creator's). */
	int codes = 0;
	for (int i = 0; i < 2; i++) {
		int status;
		pid_t w = waitpid(-1, &status, 0);
		if (w > 0 && WIFEXITED(status))
			codes += WEXITSTATUS(status);
	}
	SHOW("exit_codes_sum", "%d", codes);
	RET("no_more_children", waitpid(-1, NULL, WNOHANG));
	sigset_t pending;
	sigpending(&pending);
	SHOW("sigusr1_pending", "%d", sigismember(&pending, SIGUSR1));
	return 0;
}
