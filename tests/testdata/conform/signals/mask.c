/* Masks and pending sets: sigprocmask, rt_sigpending, delivery on unblock,
 * one instance of a standard signal, queued real-time signals,
 * rt_sigtimedwait and its timeout, SIGKILL and SIGSTOP never blocked. */
#include "../conform.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static volatile int usr1, rt, order[8], norder;

static void on_usr1(int sig) {
	(void)sig;
	usr1++;
	order[norder++] = sig;
}
static void on_rt(int sig) {
	rt++;
	order[norder++] = sig;
}

int main(void) {
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr1);
	signal(SIGRTMIN, on_rt);
	sigset_t set, old, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGRTMIN);
	RET("block", sigprocmask(SIG_BLOCK, &set, &old));
	SHOW("old.empty", "%d", sigismember(&old, SIGUSR1));
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGRTMIN);
	kill(getpid(), SIGRTMIN);
	kill(getpid(), SIGRTMIN);
	SHOW("blocked.not.delivered", "%d %d", usr1, rt);
	RET("sigpending", sigpending(&pend));
	SHOW("pending", "usr1=%d usr2=%d rt=%d term=%d", sigismember(&pend, SIGUSR1), sigismember(&pend, SIGUSR2),
	     sigismember(&pend, SIGRTMIN), sigismember(&pend, SIGTERM));
	RET("unblock", sigprocmask(SIG_UNBLOCK, &set, NULL));
	SHOW("delivered", "usr=%d rt=%d", usr1, rt);
	SHOW("order", "%d %d %d %d %d", order[0], order[1], order[2], order[3], order[4]);
	sigpending(&pend);
	SHOW("pending.after", "%d", sigismember(&pend, SIGUSR1));

	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	sigprocmask(SIG_SETMASK, NULL, &old);
	SHOW("kill.stop.unblockable", "%d %d %d", sigismember(&old, SIGKILL), sigismember(&old, SIGSTOP), sigismember(&old, SIGTERM));
	RET("how.bad", syscall(SYS_rt_sigprocmask, 7, &set, NULL, 8));
	RET("how.bad.noset", syscall(SYS_rt_sigprocmask, 7, NULL, NULL, 8));
	RET("setsize.bad", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 16));
	RET("efault", syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, 8));

	/* rt_sigtimedwait takes a pending signal without running its handler. */
	sigprocmask(SIG_SETMASK, &set, NULL);
	usr1 = 0;
	kill(getpid(), SIGUSR1);
	siginfo_t si;
	struct timespec zero = {0, 0}, short_wait = {0, 50000000};
	RET("sigtimedwait", sigtimedwait(&set, &si, &zero));
	SHOW("sigtimedwait.info", "signo=%d code=%d pid=%d handler=%d", si.si_signo, si.si_code, si.si_pid == getpid(), usr1);
	RET("sigtimedwait.empty", sigtimedwait(&set, &si, &zero));
	RET("sigtimedwait.timeout", sigtimedwait(&set, &si, &short_wait));
	struct timespec bad = {0, 2000000000};
	RET("sigtimedwait.einval", sigtimedwait(&set, &si, &bad));
	raise(SIGUSR2);
	RET("sigwaitinfo", sigwaitinfo(&set, &si));
	SHOW("sigwaitinfo.code", "%d", si.si_code);
	/* A fatal signal that sigwaitinfo waits for arrives during the wait:
	 * it is taken, not fatal (in a child: init ignores SIGTERM anyway). */
	pid_t waiter = fork();
	if (waiter == 0) {
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_BLOCK, &term, NULL);
		pid_t pid = fork();
		if (pid == 0) {
			struct timespec d = {0, 100000000};
			nanosleep(&d, NULL);
			kill(getppid(), SIGTERM);
			_exit(0);
		}
		RET("sigwaitinfo.fatal", sigwaitinfo(&term, &si));
		SHOW("sigwaitinfo.fatal.from.child", "code=%d pid=%d", si.si_code, si.si_pid == pid);
		waitpid(pid, NULL, 0);
		_exit(0);
	}
	int status;
	waitpid(waiter, &status, 0);
	SHOW("sigwaitinfo.fatal.survived", "exited=%d", WIFEXITED(status));
	int got = 0;
	kill(getpid(), SIGRTMIN);
	RET("sigwait", sigwait(&set, &got));
	SHOW("sigwait.sig", "%d", got == SIGRTMIN);
	return 0;
}
