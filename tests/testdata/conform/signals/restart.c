/* Interrupted system calls: wait4 fails with EINTR under a handler without
 * SA_RESTART and is re-executed under SA_RESTART; nanosleep and
 * rt_sigsuspend fail with EINTR either way; nanosleep reports the time
 * left; a signal that is ignored does not interrupt. */
#include "../conform.h"
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static volatile int alarms;
static void on_alarm(int sig) {
	(void)sig;
	alarms++;
}

static void handle(int flags) {
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

/* after_ms arms ITIMER_REAL once. */
static void after_ms(int ms) {
	struct itimerval it = {{0, 0}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

/* child_sleeping forks a child that sleeps ms and exits with code. */
static pid_t child_sleeping(int ms, int code) {
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = {0, ms * 1000000L};
		nanosleep(&ts, NULL);
		_exit(code);
	}
	return pid;
}

int main(void) {
	int status = 0;
	handle(0);
	pid_t pid = child_sleeping(400, 3);
	after_ms(50);
	RET("wait4.eintr", waitpid(pid, &status, 0));
	SHOW("wait4.eintr.alarms", "%d", alarms);
	SHOW("wait4.reaped.later", "%d", waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 3);

	handle(SA_RESTART);
	alarms = 0;
	pid = child_sleeping(400, 4);
	after_ms(50);
	SHOW("wait4.restarted", "%d", waitpid(pid, &status, 0) == pid);
	SHOW("wait4.restarted.status", "alarms=%d exit=%d", alarms, WEXITSTATUS(status));

	alarms = 0;
	after_ms(50);
	struct timespec ts = {5, 0}, rem = {0, 0};
	RET("nanosleep.sa_restart", nanosleep(&ts, &rem));
	SHOW("nanosleep.rem", "alarms=%d sec<5=%d sec>=4=%d", alarms, rem.tv_sec < 5, rem.tv_sec >= 4);

	handle(0);
	after_ms(50);
	RET("nanosleep.eintr", nanosleep(&ts, NULL));

	sigset_t none;
	sigemptyset(&none);
	handle(SA_RESTART);
	after_ms(50);
	RET("sigsuspend.sa_restart", sigsuspend(&none));

	/* An ignored signal does not interrupt. */
	signal(SIGUSR1, SIG_IGN);
	pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 50000000};
		nanosleep(&d, NULL);
		kill(getppid(), SIGUSR1);
		nanosleep(&d, NULL);
		_exit(5);
	}
	SHOW("wait4.ignored.signal", "%d", waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 5);

	/* Neither does a blocked one, until it is unblocked. */
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, NULL);
	handle(0);
	alarms = 0;
	pid = child_sleeping(200, 6);
	after_ms(50);
	SHOW("wait4.blocked.signal", "%d", waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 6);
	SHOW("blocked.pending", "alarms=%d", alarms);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	SHOW("unblocked", "alarms=%d", alarms);
	return 0;
}
