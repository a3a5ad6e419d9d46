/* Process groups and sessions: setsid, setpgid, getpgid, getsid,
 * getpgrp and their errors; children inherit group and session; kill(0)
 * and kill(-pgid) reach every member; wait4 by group; an orphan is
 * reparented and its new parent can wait for it. */
#include "../conform.h"
#include "../signals/pause.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

static volatile int usr1;
static void on_usr1(int sig) {
	(void)sig;
	usr1++;
}

/* member forks a child that waits for SIGUSR1 (blocked in the parent
 * before the fork) and exits with code. */
static pid_t member(int code) {
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigsuspend(&none);
		_exit(code + usr1);
	}
	return pid;
}

int main(void) {
	pid_t me = getpid();
	/* A fresh session, so that kill(0) stays inside this test. */
	SHOW("setsid", "%d", setsid() == me);
	SHOW("getsid", "%d", getsid(0) == me);
	SHOW("getpgrp", "%d", getpgrp() == me);
	SHOW("getpgid.self", "%d", getpgid(0) == me && getpgid(me) == me);
	RET("setsid.leader", setsid());
	RET("setpgid.leader", setpgid(0, 0));
	RET("setpgid.negative", setpgid(0, -1));
	RET("getpgid.nosuch", getpgid(999999));
	RET("getsid.nosuch", getsid(999999));
	RET("setpgid.nosuch", setpgid(999999, 0));

	struct sigaction sa = {0};
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t usr, none;
	sigemptyset(&usr);
	sigemptyset(&none);
	sigaddset(&usr, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr, NULL);

	/* Inheritance. */
	pid_t pid = fork();
	if (pid == 0) {
		SHOW("child.inherits", "pgrp=%d sid=%d", getpgrp() == getpgid(getppid()), getsid(0) == getsid(getppid()));
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* kill(0): the caller's whole group, the caller included. */
	pid_t a = member(10), b = member(20);
	RET("kill.group0", kill(0, SIGUSR1));
	int status;
	waitpid(a, &status, 0);
	SHOW("member.a", "%d", WEXITSTATUS(status));
	waitpid(b, &status, 0);
	SHOW("member.b", "%d", WEXITSTATUS(status));
	sigsuspend(&none);
	SHOW("self.got.group0", "%d", usr1);
	sigprocmask(SIG_BLOCK, &usr, NULL);

	/* A group of children of its own, signalled with kill(-pgid). */
	a = member(30);
	RET("setpgid.child", setpgid(a, a));
	SHOW("getpgid.child", "%d", getpgid(a) == a);
	b = member(40);
	RET("setpgid.join", setpgid(b, a));
	SHOW("getpgid.joined", "%d", getpgid(b) == a);
	RET("setpgid.nogroup", setpgid(b, 999999));
	usr1 = 0;
	RET("kill.pgid", kill(-a, SIGUSR1));
	SHOW("wait.group.first", "%d", waitpid(-a, &status, 0) > 0 && WEXITSTATUS(status) >= 31);
	SHOW("wait.group.second", "%d", waitpid(-a, &status, 0) > 0 && WEXITSTATUS(status) >= 31);
	RET("wait.group.empty", waitpid(-a, &status, 0));
	sigpending(&usr);
	SHOW("self.not.in.group", "%d", sigismember(&usr, SIGUSR1));
	RET("kill.pgid.gone", kill(-a, SIGUSR1));
	RET("kill.pgid.nosuch", kill(-999999, SIGUSR1));

	/* A child in a session of its own. */
	pid = fork();
	if (pid == 0) {
		SHOW("child.setsid", "%d", setsid() == getpid());
		SHOW("child.session", "sid=%d pgrp=%d", getsid(0) == getpid(), getpgrp() == getpid());
		RET("child.setpgid.other.session", setpgid(0, getppid()));
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* wait4(0): children in the caller's group only. */
	a = fork();
	if (a == 0) {
		setpgid(0, 0);
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
		_exit(1);
	}
	setpgid(a, a);
	b = fork();
	if (b == 0)
		_exit(2);
	SHOW("wait0.own.group", "%d", waitpid(0, &status, 0) == b && WEXITSTATUS(status) == 2);
	RET("wait0.none.left", waitpid(0, &status, WNOHANG));
	SHOW("wait.other.group", "%d", waitpid(a, &status, 0) == a && WEXITSTATUS(status) == 1);

	/* An orphan: its parent exits, it gets a new parent and tells us. */
	sigprocmask(SIG_BLOCK, &usr, NULL);
	usr1 = 0;
	pid = fork();
	if (pid == 0) {
		pid_t parent = getpid();
		if (fork() == 0) {
			while (getppid() == parent) {
				struct timespec ts = {0, 10000000};
				nanosleep(&ts, NULL);
			}
			SHOW("orphan.reparented", "%d", getppid() != parent);
			kill(me, SIGUSR1);
			_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	sigsuspend(&none);
	SHOW("orphan.told.us", "%d", usr1);
	return 0;
}
