/* A child touches memory until there is none: the kernel's OOM killer
 * ends it with SIGKILL, and init and the kernel go on (tests/oom_test.go). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	pid_t pid = fork();
	if (pid == 0) {
		for (;;) {
			char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				continue;
			memset(p, 1, 1 << 20);
		}
	}
	int status;
	waitpid(pid, &status, 0);
	printf("child killed: %d, by signal %d\n", WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	char *q = malloc(8 << 20);
	memset(q, 2, 8 << 20);
	printf("init allocates again: %d\n", q[12345]);
	return 0;
}
