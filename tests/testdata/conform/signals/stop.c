/* Stop and continue: SIGSTOP and SIGTSTP stop a child, wait4 with
 * WUNTRACED and WCONTINUED reports them, SIGCHLD says CLD_STOPPED and
 * CLD_CONTINUED, SIGKILL ends a stopped child,
 * a handled SIGCONT runs its handler. */
#include "../conform.h"
#include "pause.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static volatile int chlds, code, status_;
static void on_chld(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	chlds++;
	code = si->si_code;
	status_ = si->si_status;
}

static void sleep_ms(int ms) {
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

static volatile int conts;
static void on_cont(int sig) {
	(void)sig;
	conts++;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	int status;

	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			wait_signal();
	}
	RET("kill.stop", kill(pid, SIGSTOP));
	SHOW("wait.stopped", "%d", waitpid(pid, &status, WUNTRACED) == pid);
	SHOW("wait.stopped.status", "stopped=%d sig=%d", WIFSTOPPED(status), WSTOPSIG(status));
	SHOW("chld.stopped", "code=%d status=%d", code, status_);
	RET("wait.stopped.again", waitpid(pid, &status, WUNTRACED | WNOHANG));
	RET("kill.cont", kill(pid, SIGCONT));
	SHOW("wait.continued", "%d", waitpid(pid, &status, WCONTINUED) == pid);
	SHOW("wait.continued.status", "continued=%d stopped=%d", WIFCONTINUED(status), WIFSTOPPED(status));
	SHOW("chld.continued", "code=%d status=%d", code, status_);
	kill(pid, SIGSTOP);
	waitpid(pid, &status, WUNTRACED);
	RET("kill.stopped.term", kill(pid, SIGKILL));
	SHOW("wait.killed.stopped", "%d", waitpid(pid, &status, 0) == pid);
	SHOW("wait.killed.status", "signaled=%d sig=%d", WIFSIGNALED(status), WTERMSIG(status));

	/* A child stops itself with SIGTSTP; a handled SIGCONT runs. Its own
	 * process group keeps it from being orphaned (Linux discards SIGTSTP
	 * in an orphaned group, which depends on how the test was started). */
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGCONT, on_cont);
		raise(SIGTSTP);
		_exit(10 + conts);
	}
	SHOW("wait.tstp", "%d", waitpid(pid, &status, WUNTRACED) == pid);
	SHOW("wait.tstp.status", "stopped=%d sig=%d", WIFSTOPPED(status), WSTOPSIG(status));
	kill(pid, SIGCONT);
	waitpid(pid, &status, 0);
	SHOW("wait.cont.handled", "exited=%d code=%d", WIFEXITED(status), WEXITSTATUS(status));

	/* Without WUNTRACED a stop is not reported. (SA_NOCLDSTOP is not
	 * checked: qemu-riscv64, the oracle, sends SIGCHLD for stops anyway.) */
	pid = fork();
	if (pid == 0) {
		for (;;)
			wait_signal();
	}
	kill(pid, SIGSTOP);
	sleep_ms(100);
	RET("wait.nohang.stopped", waitpid(pid, &status, WNOHANG));
	kill(pid, SIGTERM);
	RET("kill.stopped.cont", kill(pid, SIGCONT));
	waitpid(pid, &status, 0);
	SHOW("stopped.term.after.cont", "sig=%d", WTERMSIG(status));
	return 0;
}
