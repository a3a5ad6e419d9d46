/* SIGCHLD: siginfo of an exit and of a death by signal, wait statuses,
 * SIG_IGN reaping children at once, SA_NOCLDSTOP. */
#include "../conform.h"
#include "pause.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static volatile int chlds, code, status_, pid_ok;
static volatile pid_t expect;
static void on_chld(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	chlds++;
	code = si->si_code;
	status_ = si->si_status;
	pid_ok = si->si_pid == expect;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t chld, none;
	sigemptyset(&chld);
	sigemptyset(&none);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	expect = pid;
	sigsuspend(&none);
	SHOW("chld.exit", "n=%d code=%d status=%d pid=%d", chlds, code, status_, pid_ok);
	int status;
	SHOW("wait.exit", "%d", waitpid(pid, &status, 0) == pid);
	SHOW("wait.exit.status", "exited=%d code=%d signaled=%d", WIFEXITED(status), WEXITSTATUS(status), WIFSIGNALED(status));

	pid = fork();
	if (pid == 0) {
		wait_signal();
		_exit(0);
	}
	expect = pid;
	RET("kill.child", kill(pid, SIGTERM));
	sigsuspend(&none);
	SHOW("chld.killed", "n=%d code=%d status=%d pid=%d", chlds, code, status_, pid_ok);
	waitpid(pid, &status, 0);
	SHOW("wait.killed", "exited=%d signaled=%d sig=%d", WIFEXITED(status), WIFSIGNALED(status), WTERMSIG(status));
	RET("kill.reaped", kill(pid, 0));
	RET("wait.none", waitpid(-1, &status, WNOHANG));

	pid = fork();
	if (pid == 0) {
		wait_signal();
		_exit(0);
	}
	RET("wait.nohang.running", waitpid(pid, &status, WNOHANG));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	SHOW("wait.sigkill", "sig=%d", WTERMSIG(status));
	RET("wait.notchild", waitpid(1, &status, WNOHANG));
	RET("wait.badopt", waitpid(-1, &status, 0x4000));

	/* Exit codes above 128 are codes, not signals. */
	pid = fork();
	if (pid == 0)
		_exit(130);
	waitpid(pid, &status, 0);
	SHOW("wait.exit130", "exited=%d code=%d", WIFEXITED(status), WEXITSTATUS(status));

	/* Under SIG_DFL a blocked SIGCHLD is not discarded: sigwaitinfo
	 * takes it. */
	signal(SIGCHLD, SIG_DFL);
	pid = fork();
	if (pid == 0)
		_exit(9);
	siginfo_t si;
	RET("sigwaitinfo.chld", sigwaitinfo(&chld, &si));
	SHOW("sigwaitinfo.chld.info", "code=%d status=%d pid=%d", si.si_code, si.si_status, si.si_pid == pid);
	waitpid(pid, &status, 0);

	/* SIG_IGN: children are reaped at once, wait finds none. */
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	signal(SIGCHLD, SIG_IGN);
	pid = fork();
	if (pid == 0)
		_exit(1);
	RET("wait.ignored", waitpid(pid, &status, 0));
	return 0;
}
