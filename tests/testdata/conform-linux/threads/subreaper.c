/* PR_SET_CHILD_SUBREAPER: an orphan goes to the nearest living ancestor
 * marked a subreaper, which gets its SIGCHLD and reaps it; the mark is
 * not inherited. Linux is the oracle (the program runs as init, so an
 * orphan without a subreaper comes back to it too). */
#include "../../conform/conform.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static volatile int chld;

static void on_chld(int sig) {
	(void)sig;
	chld++;
}

int main(void) {
	int v = -1;
	RET("get.default", prctl(PR_GET_CHILD_SUBREAPER, &v));
	SHOW("default", "%d", v);
	RET("get.bad", prctl(PR_GET_CHILD_SUBREAPER, BAD));
	pid_t self = getpid();
	pid_t mid = fork();
	if (mid == 0) {
		/* a subreaper between init and the orphan */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		signal(SIGCHLD, on_chld);
		int got = -1;
		prctl(PR_GET_CHILD_SUBREAPER, &got);
		pid_t me = getpid();
		/* the orphan exits only once the first SIGCHLD was handled:
		 * two pending at once would count as one */
		int go[2];
		pipe(go);
		pid_t c = fork();
		if (c == 0) {
			int inherited = -1;
			prctl(PR_GET_CHILD_SUBREAPER, &inherited);
			pid_t parent = getpid();
			pid_t gc = fork();
			if (gc == 0) {
				for (int i = 0; i < 200 && getppid() == parent; i++)
					usleep(10000);
				pid_t now = getppid();
				printf("orphan.parent: %s\n", now == me ? "subreaper" : now == 1 ? "init" : now == parent ? "unchanged" : "other");
				fflush(stdout);
				char ch;
				read(go[0], &ch, 1);
				_exit(7);
			}
			printf("child.inherited: %d\n", inherited);
			fflush(stdout);
			_exit(0);
		}
		waitpid(c, NULL, 0);
		write(go[1], "g", 1);
		int st = 0;
		pid_t r = wait(&st);
		printf("subreaper.set: %d\n", got);
		printf("subreaper.reaped: %d status %d\n", r > 0, WEXITSTATUS(st));
		printf("subreaper.sigchld: %d\n", chld);
		fflush(stdout);
		_exit(0);
	}
	waitpid(mid, NULL, 0);
	/* without a subreaper the orphan comes to init, this program */
	pid_t c = fork();
	if (c == 0) {
		pid_t parent = getpid();
		pid_t gc = fork();
		if (gc == 0) {
			for (int i = 0; i < 200 && getppid() == parent; i++)
				usleep(10000);
			printf("orphan.parent.is.init: %d\n", getppid() == self);
			fflush(stdout);
			_exit(3);
		}
		_exit(0);
	}
	waitpid(c, NULL, 0);
	int st = 0;
	pid_t r = wait(&st);
	SHOW("init.reaped", "%d status %d", r > 0, WEXITSTATUS(st));
	RET("set.0", prctl(PR_SET_CHILD_SUBREAPER, 0));
	return 0;
}
