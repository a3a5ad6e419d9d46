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
#include <sys/mman.h>
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
 * and the errno in out, and stops itself until it is killed: the report
 * takes no kernel memory (a pipe's page is a buffer, which the budget's
 * object reserve would refuse while the timers hold it all). */
static void fill(int *out) {
	struct itimerspec in_an_hour = {.it_value = {.tv_sec = 3600}};
	int result[2] = {0, 0};
	for (;;) {
		int fd = timerfd_create(CLOCK_MONOTONIC, 0);
		if (fd < 0) {
			result[1] = errno;
			break;
		}
		timerfd_settime(fd, 0, &in_an_hour, NULL);
		result[0]++;
	}
	memcpy(out, result, sizeof result);
	for (;;)
		raise(SIGSTOP);
}

int main(void) {
	struct rlimit nofile = {4096, 4096};
	setrlimit(RLIMIT_NOFILE, &nofile);
	int *report = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (report == MAP_FAILED) {
		perror("timerfill: mmap");
		return 1;
	}
	static pid_t kids[KIDS];
	long timers = 0;
	int n = 0, stop = 0;
	while (n < KIDS && !stop) {
		pid_t pid = fork();
		if (pid == 0)
			fill(report);
		if (pid < 0) {
			printf("timerfill: fork: %s\n", strerrorname_np(errno));
			break;
		}
		kids[n++] = pid;
		int status, result[2];
		if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
			printf("timerfill: child %d died\n", n);
			break;
		}
		memcpy(result, report, sizeof result);
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
