/* The CPU-time interval timers, as LTP's setitimer01 checks them:
 * ITIMER_VIRTUAL counts the process's user time and sends SIGVTALRM,
 * ITIMER_PROF its user and system time and sends SIGPROF; both rearm for
 * their interval, return the old setting, do not run while the process
 * sleeps, are not inherited by a fork child, and kill with their signal
 * when it is not handled. Times vary, so only ranges are printed. */
#include "../conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile unsigned long count;

static void counted(int sig) {
	(void)sig;
	count++;
}

static void set(int which, long sec, long usec, long isec, long iusec, struct itimerval *old) {
	struct itimerval v = {{isec, iusec}, {sec, usec}};
	setitimer(which, &v, old);
}

/* spin burns CPU until count passes n, or five seconds of wall time. */
static void spin(unsigned long n) {
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (count <= n && now.tv_sec - start.tv_sec < 5);
}

static void check(const char *name, int which, int sig) {
	char line[96];
	struct itimerval v;
#define LINE(what) (snprintf(line, sizeof line, "%s %s", name, what), line)
	RET(LINE("getitimer unset"), getitimer(which, &v));
	SHOW(LINE("unset"), "%ld %ld %ld %ld", v.it_value.tv_sec, v.it_value.tv_usec, v.it_interval.tv_sec, v.it_interval.tv_usec);

	struct itimerval nv = {{9, 3000}, {9, 3000}}, old;
	RET(LINE("setitimer"), setitimer(which, &nv, NULL));
	set(which, 45, 21000, 45, 21000, &old);
	SHOW(LINE("old interval"), "%ld %ld", old.it_interval.tv_sec, old.it_interval.tv_usec);
	/* LTP's range: Linux adds a tick (4 ms) to a CPU timer's value. */
	SHOW(LINE("old value in range"), "%d", (old.it_value.tv_sec == 9 && old.it_value.tv_usec <= 3000 + 4000) ||
	                                           (old.it_value.tv_sec == 8 && old.it_value.tv_usec > 0));
	RET(LINE("getitimer"), getitimer(which, &v));
	SHOW(LINE("value at most set and a tick"), "%d", (v.it_value.tv_sec == 45 && v.it_value.tv_usec <= 21000 + 4000) ||
	                                                     (v.it_value.tv_sec == 44 && v.it_value.tv_usec > 0));
	SHOW(LINE("interval"), "%ld %ld", v.it_interval.tv_sec, v.it_interval.tv_usec);

	struct itimerval bad = {{0, 1000000}, {1, 0}};
	RET(LINE("usec 1000000"), setitimer(which, &bad, NULL));

	/* Sleeping uses no CPU time: a 50 ms timer does not fire in 300 ms. */
	signal(sig, counted);
	count = 0;
	set(which, 0, 50000, 0, 0, NULL);
	usleep(300000);
	SHOW(LINE("signals while sleeping"), "%lu", count);
	getitimer(which, &v);
	SHOW(LINE("still armed after sleeping"), "%d", v.it_value.tv_sec == 0 && v.it_value.tv_usec > 30000);

	/* A fork child starts with the timer disarmed. */
	pid_t pid = fork();
	if (pid == 0) {
		getitimer(which, &v);
		_exit(v.it_value.tv_sec != 0 || v.it_value.tv_usec != 0);
	}
	int st;
	waitpid(pid, &st, 0);
	SHOW(LINE("fork child's timer disarmed"), "%d", WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* It fires on CPU time and rearms itself. */
	set(which, 0, 10000, 0, 10000, NULL);
	spin(10);
	SHOW(LINE("more than 10 signals while spinning"), "%d", count > 10);
	set(which, 0, 0, 0, 0, NULL);
	getitimer(which, &v);
	SHOW(LINE("disarmed"), "%ld %ld %ld %ld", v.it_value.tv_sec, v.it_value.tv_usec, v.it_interval.tv_sec, v.it_interval.tv_usec);
	signal(sig, SIG_DFL);

	/* Unhandled, its signal ends the process. */
	pid = fork();
	if (pid == 0) {
		set(which, 0, 20000, 0, 0, NULL);
		count = 0;
		spin(0);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	SHOW(LINE("child ended by"), "%s", WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "exit");
}

int main(void) {
	check("ITIMER_VIRTUAL", ITIMER_VIRTUAL, SIGVTALRM);
	check("ITIMER_PROF", ITIMER_PROF, SIGPROF);
	struct itimerval v;
	RET("getitimer 3", getitimer(3, &v));
	RET("setitimer -1", setitimer(-1, &v, NULL));
	return 0;
}
