/* timerfill: /init for tests/oom_test.go TestTimersBounded (issue 34). Up
 * to 400 children each create armed timerfds until timerfd_create fails
 * and then wait, keeping them: EMFILE (RLIMIT_NOFILE, 4096) moves on to
 * the next child; any other errno ends the filling. 1.6 million timers
 * would take far more kernel memory than a 256 MiB machine has: on Linux
 * timerfd_create fails with ENOMEM (or the OOM killer ends a holder),
 * and the kernel lives. Once the children are killed nothing stays
 * charged, and init allocates and forks again. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

enum { KIDS = 400 };

static long charged_kib(void) {
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Charged: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* fill creates armed timers until timerfd_create fails, reports how many
 * and the errno on out, and waits to be killed. */
static void fill(int out) {
	struct itimerspec in_an_hour = {.it_value = {.tv_sec = 3600}};
	int result[2] = {0, 0}, last = -1;
	for (;;) {
		int fd = timerfd_create(CLOCK_MONOTONIC, 0);
		if (fd < 0) {
			result[1] = errno;
			break;
		}
		timerfd_settime(fd, 0, &in_an_hour, NULL);
		result[0]++;
		last = fd;
	}
	/* The report's pipe page is charged too: a few timers make room. */
	for (int i = 0; i < 64 && last - i >= 0; i++)
		close(last - i);
	write(out, result, sizeof result);
	for (;;)
		pause();
}

int main(void) {
	struct rlimit nofile = {4096, 4096};
	setrlimit(RLIMIT_NOFILE, &nofile);
	int report[2];
	if (pipe(report) != 0) {
		perror("timerfill: pipe");
		return 1;
	}
	static pid_t kids[KIDS];
	long timers = 0;
	int n = 0, stop = 0;
	while (n < KIDS && !stop) {
		pid_t pid = fork();
		if (pid == 0)
			fill(report[1]);
		if (pid < 0) {
			printf("timerfill: fork: %s\n", strerrorname_np(errno));
			break;
		}
		kids[n++] = pid;
		int result[2];
		if (read(report[0], result, sizeof result) != sizeof result) {
			printf("timerfill: child %d died\n", n);
			break;
		}
		timers += result[0];
		if (result[1] != EMFILE) {
			printf("timerfill: %ld timers in %d processes, then %s\n", timers, n, strerrorname_np(result[1]));
			stop = 1;
		}
	}
	if (!stop)
		printf("timerfill: %ld timers in %d processes, no error\n", timers, n);
	printf("timerfill: charged while full: %ld kB\n", charged_kib());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	printf("timerfill: charged after: %ld kB\n", charged_kib());
	char *q = malloc(64 << 20);
	memset(q, 3, 64 << 20);
	pid_t pid = fork();
	if (pid == 0) {
		char *c = malloc(32 << 20);
		memset(c, 4, 32 << 20);
		_exit(c[777] == 4 ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	printf("timerfill: init allocates %d, child exit %d\n", q[4321], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
