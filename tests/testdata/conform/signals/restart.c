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
static int release_fd = -1; /* the pipe a waiting child reads */

/* on_alarm also releases the waiting child: it cannot exit before the
 * alarm, however late a loaded host delivers it. */
static void on_alarm(int sig) {
	(void)sig;
	alarms++;
	if (release_fd >= 0)
		write(release_fd, "x", 1);
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

/* child_waiting forks a child that exits with code once the alarm
 * handler has run. */
static pid_t child_waiting(int code) {
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		read(p[0], &c, 1);
		_exit(code);
	}
	close(p[0]);
	release_fd = p[1];
	return pid;
}

static void release_done(void) {
	close(release_fd);
	release_fd = -1;
}

int main(void) {
	int status = 0;
	handle(0);
	pid_t pid = child_waiting(3);
	after_ms(50);
	RET("wait4.eintr", waitpid(pid, &status, 0));
	SHOW("wait4.eintr.alarms", "%d", alarms);
	SHOW("wait4.reaped.later", "%d", waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 3);
	release_done();

	handle(SA_RESTART);
	alarms = 0;
	pid = child_waiting(4);
	after_ms(50);
	SHOW("wait4.restarted", "%d", waitpid(pid, &status, 0) == pid);
	SHOW("wait4.restarted.status", "alarms=%d exit=%d", alarms, WEXITSTATUS(status));
	release_done();

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
	pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 200000000};
		nanosleep(&d, NULL);
		_exit(6);
	}
	after_ms(50);
	SHOW("wait4.blocked.signal", "%d", waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 6);
	SHOW("blocked.pending", "alarms=%d", alarms);
	/* However late a loaded host makes the alarm, it is pending before
	 * the unblock. */
	sigset_t pending;
	for (int i = 0; i < 5000; i++) {
		sigpending(&pending);
		if (sigismember(&pending, SIGALRM))
			break;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	SHOW("unblocked", "alarms=%d", alarms);
	return 0;
}
