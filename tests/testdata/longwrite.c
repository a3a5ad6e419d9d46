/* longwrite: /init for tests/oom_test.go TestLongWriteIsKillable. A child
 * writes 1 GiB of an untouched anonymous mapping to the console, a write
 * that would take the UART hours; the parent, after a second, kills it and
 * must be scheduled, reap it, and see its memory given back. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (1ul << 30)

/* resident reads this process's resident pages from /proc/self/statm. */
static long resident(void) {
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = -1;
	if (f) {
		fscanf(f, "%ld %ld", &size, &res);
		fclose(f);
	}
	return res;
}

int main(void) {
	int fds[2];
	pipe(fds);
	pid_t pid = fork();
	if (pid == 0) {
		char *p = mmap(NULL, SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char c = 'w';
		write(fds[1], &c, 1);
		ssize_t n = write(1, p, SIZE);
		printf("\nlongwrite: the write returned %zd with %ld pages resident\n", n, resident());
		_exit(0);
	}
	char c;
	read(fds[0], &c, 1);
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	sleep(1);
	kill(pid, SIGKILL);
	int status = 0;
	waitpid(pid, &status, 0);
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("\nlongwrite: child ended by signal %d after %ld s\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
	       (long)(end.tv_sec - start.tv_sec));
	return 0;
}
