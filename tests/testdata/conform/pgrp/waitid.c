/* waitid: P_PID, P_ALL and P_PGID (group 0 is the caller's), WEXITED,
 * WSTOPPED, WCONTINUED, WNOHANG with nothing to report (zeroed siginfo),
 * WNOWAIT leaving the child waitable, and argument checks. */
#include "../conform.h"
#include "../signals/pause.h"
#include <signal.h>
#include <sys/wait.h>

static void show(const char *name, int ret, siginfo_t *si, pid_t pid) {
	if (ret == -1) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	SHOW(name, "%d signo=%d code=%d status=%d pid=%d", ret, si->si_signo, si->si_code, si->si_status, si->si_pid == pid);
}

int main(void) {
	SHOW("setsid", "%d", setsid() == getpid());
	siginfo_t si;
	pid_t pid = fork();
	if (pid == 0)
		_exit(3);
	errno = 0;
	show("waitid.pid.nowait", waitid(P_PID, pid, &si, WEXITED | WNOWAIT), &si, pid);
	show("waitid.pid", waitid(P_PID, pid, &si, WEXITED), &si, pid);
	show("waitid.gone", waitid(P_PID, pid, &si, WEXITED), &si, pid);

	pid = fork();
	if (pid == 0) {
		for (;;)
			wait_signal();
	}
	si.si_pid = 1234;
	RET("waitid.nohang.none", waitid(P_ALL, 0, &si, WEXITED | WNOHANG));
	SHOW("waitid.nohang.zeroed", "signo=%d pid=%d", si.si_signo, si.si_pid);
	kill(pid, SIGSTOP);
	show("waitid.stopped", waitid(P_ALL, 0, &si, WSTOPPED), &si, pid);
	kill(pid, SIGCONT);
	show("waitid.continued", waitid(P_PGID, 0, &si, WCONTINUED), &si, pid);
	kill(pid, SIGTERM);
	show("waitid.killed", waitid(P_PGID, getpgrp(), &si, WEXITED), &si, pid);

	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		_exit(4);
	}
	setpgid(pid, pid);
	show("waitid.other.group", waitid(P_PGID, pid, &si, WEXITED), &si, pid);
	show("waitid.badtype", waitid(7, 0, &si, WEXITED), &si, 0);
	show("waitid.nooptions", waitid(P_ALL, 0, &si, WNOHANG), &si, 0);
	show("waitid.badpid", waitid(P_PID, 0, &si, WEXITED), &si, 0);
	show("waitid.nochild", waitid(P_ALL, 0, &si, WEXITED), &si, 0);
	return 0;
}
