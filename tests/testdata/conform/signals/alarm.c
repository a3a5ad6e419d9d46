/* alarm and setitimer(ITIMER_REAL): SIGALRM waited for with sigsuspend, the time left,
 * a periodic timer, getitimer after disarming, and SIGALRM's default
 * action. */
#include "../conform.h"
#include "pause.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile int alarms, code;
static void on_alarm(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	alarms++;
	code = si->si_code;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);

	RET("alarm.first", alarm(1));
	RET("wait_signal", wait_signal());
	SHOW("wait_signal.alarm", "alarms=%d code=%d", alarms, code);

	RET("alarm.set", alarm(5));
	RET("alarm.left", alarm(0));
	RET("alarm.none", alarm(0));

	struct itimerval it = {{0, 30000}, {0, 30000}}, old;
	RET("setitimer.periodic", setitimer(ITIMER_REAL, &it, NULL));
	sigset_t none;
	sigemptyset(&none);
	alarms = 0;
	while (alarms < 3)
		sigsuspend(&none);
	SHOW("periodic.alarms", "%d", alarms);
	RET("getitimer", getitimer(ITIMER_REAL, &old));
	SHOW("getitimer.interval", "%ld %ld", (long)old.it_interval.tv_sec, (long)old.it_interval.tv_usec);
	SHOW("getitimer.armed", "%d", old.it_value.tv_usec > 0 && old.it_value.tv_usec <= 30000);
	struct itimerval off = {{0, 0}, {0, 0}};
	RET("setitimer.off", setitimer(ITIMER_REAL, &off, &old));
	SHOW("setitimer.old.interval", "%ld", (long)old.it_interval.tv_usec);
	RET("getitimer.off", getitimer(ITIMER_REAL, &old));
	SHOW("getitimer.off.values", "%ld %ld %ld %ld", (long)old.it_interval.tv_sec, (long)old.it_interval.tv_usec,
	     (long)old.it_value.tv_sec, (long)old.it_value.tv_usec);
	struct itimerval bad = {{0, 0}, {0, 1000000}};
	RET("setitimer.einval", setitimer(ITIMER_REAL, &bad, NULL));
	RET("setitimer.which", syscall(SYS_setitimer, 7, &it, NULL));
	RET("getitimer.which", syscall(SYS_getitimer, 7, &old));

	/* SIGALRM's default action terminates; the timer is not inherited. */
	alarm(1);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		RET("child.alarm.inherited", alarm(1));
		wait_signal();
		_exit(0);
	}
	alarm(0);
	int status;
	waitpid(pid, &status, 0);
	SHOW("alarm.default", "signaled=%d sig=%d", WIFSIGNALED(status), WTERMSIG(status));
	return 0;
}
