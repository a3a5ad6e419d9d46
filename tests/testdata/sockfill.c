/* Issue 34: 450 Unix socketpairs, both ends of each written full with
 * non-blocking writes (256 KiB on each end before issue 34, 225 MiB in
 * all, and the kernel ran out of heap). Every end must stop at an errno (EAGAIN at its SO_SNDBUF,
 * or ENOBUFS/ENOMEM once the kernel's budget is spent) without the kernel
 * running out of heap. Then 300 pipes of 1 MiB (F_SETPIPE_SZ) written
 * full: each stops at EAGAIN or, once the budget is spent, ENOMEM. After
 * closing them init allocates, forks, and the child exits 0
 * (tests/oom_test.go). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { PAIRS = 450, PER_END = 1 << 20 };

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

int main(void) {
	static char chunk[64 << 10];
	static int fds[PAIRS][2];
	long eagain = 0, enobufs = 0, enomem = 0, other = 0, most = 0, total = 0;
	for (int i = 0; i < PAIRS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds[i]) != 0) {
			printf("sockfill: socketpair %d: %s\n", i, strerrorname_np(errno));
			return 1;
		}
		for (int end = 0; end < 2; end++) {
			long queued = 0;
			for (;;) {
				long n = write(fds[i][end], chunk, sizeof chunk);
				if (n < 0) {
					if (errno == EAGAIN)
						eagain++;
					else if (errno == ENOBUFS)
						enobufs++;
					else if (errno == ENOMEM)
						enomem++;
					else
						other++;
					break;
				}
				queued += n;
				if (queued >= PER_END) {
					other++; /* an end took 1 MiB: no limit */
					break;
				}
			}
			total += queued;
			if (queued > most)
				most = queued;
		}
	}
	printf("sockfill: %d ends: EAGAIN %ld, ENOBUFS %ld, ENOMEM %ld, other %ld\n", 2 * PAIRS, eagain, enobufs, enomem, other);
	printf("sockfill: most queued on one end: %ld, in all %ld KiB\n", most, total >> 10);
	printf("sockfill: charged while full: %ld kB\n", charged_kib());
	fflush(stdout);
	for (int i = 0; i < PAIRS; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	printf("sockfill: charged after close: %ld kB\n", charged_kib());
	fflush(stdout);

	static int pipes[300][2];
	long full = 0, spent = 0, failed = 0;
	for (int i = 0; i < 300; i++) {
		if (pipe2(pipes[i], O_NONBLOCK) != 0 || fcntl(pipes[i][1], F_SETPIPE_SZ, 1 << 20) != 1 << 20) {
			printf("sockfill: pipe %d: %s\n", i, strerrorname_np(errno));
			return 1;
		}
		long queued = 0;
		for (;;) {
			long n = write(pipes[i][1], chunk, sizeof chunk);
			if (n >= 0 && (queued += n) <= 1 << 20)
				continue;
			if (n < 0 && errno == EAGAIN)
				full++;
			else if (n < 0 && errno == ENOMEM)
				spent++;
			else
				failed++;
			break;
		}
	}
	printf("sockfill: 300 pipes of 1 MiB: EAGAIN %ld, ENOMEM %ld, other %ld\n", full, spent, failed);
	printf("sockfill: charged with the pipes full: %ld kB\n", charged_kib());
	for (int i = 0; i < 300; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	printf("sockfill: charged after closing the pipes: %ld kB\n", charged_kib());
	char *q = malloc(64 << 20);
	memset(q, 3, 64 << 20);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char *c = malloc(32 << 20);
		memset(c, 4, 32 << 20);
		_exit(c[777] == 4 ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	printf("sockfill: init allocates %d, child exit %d\n", q[4321], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
