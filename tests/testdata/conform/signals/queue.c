/* sigqueue: si_code SI_QUEUE and si_value reach an SA_SIGINFO handler and
 * rt_sigtimedwait; real-time signals queue in order with their values;
 * another process may not forge a kernel si_code. */
#include "../conform.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static volatile int n, values[8], codes[8];
static void on_rt(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	codes[n] = si->si_code;
	values[n++] = si->si_value.sival_int;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	union sigval v = {.sival_int = 42};
	RET("sigqueue", sigqueue(getpid(), SIGUSR1, v));
	SHOW("sigqueue.handler", "n=%d code=%d value=%d", n, codes[0], values[0]);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	n = 0;
	for (int i = 1; i <= 3; i++) {
		v.sival_int = i * 100;
		sigqueue(getpid(), SIGRTMIN + 1, v);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	SHOW("rt.queued.in.order", "n=%d %d %d %d", n, values[0], values[1], values[2]);

	sigprocmask(SIG_BLOCK, &set, NULL);
	v.sival_int = 7;
	sigqueue(getpid(), SIGRTMIN + 1, v);
	siginfo_t si;
	RET("sigwaitinfo", sigwaitinfo(&set, &si) == SIGRTMIN + 1);
	SHOW("sigwaitinfo.value", "code=%d value=%d pid=%d", si.si_code, si.si_value.sival_int, si.si_pid == getpid());
	RET("sigqueue.probe", sigqueue(getpid(), 0, v));
	RET("sigqueue.badsig", sigqueue(getpid(), 99, v));
	RET("sigqueue.nosuch", sigqueue(999999, SIGUSR1, v));

	/* A child may queue SI_QUEUE to its parent, not SI_USER. */
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		siginfo_t info = {0};
		info.si_code = SI_USER;
		info.si_pid = getpid();
		info.si_uid = getuid();
		RET("child.forged.si_user", syscall(SYS_rt_sigqueueinfo, parent, SIGRTMIN + 1, &info));
		info.si_code = SI_TKILL;
		RET("child.forged.si_tkill", syscall(SYS_rt_sigqueueinfo, parent, SIGRTMIN + 1, &info));
		info.si_code = SI_QUEUE;
		info.si_value.sival_int = 9;
		RET("child.si_queue", syscall(SYS_rt_sigqueueinfo, parent, SIGRTMIN + 1, &info));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	RET("sigwaitinfo.from.child", sigwaitinfo(&set, &si) == SIGRTMIN + 1);
	SHOW("from.child", "code=%d value=%d pid=%d", si.si_code, si.si_value.sival_int, si.si_pid == pid);
	RET("tgsigqueueinfo.badtid", syscall(SYS_rt_tgsigqueueinfo, getpid(), 0, SIGUSR1, &si));
	return 0;
}
