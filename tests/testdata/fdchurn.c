/* fdchurn: /init for tests/oom_test.go TestClosedFilesGiveMemoryBack
 * (issue 34: after a process opened and closed 60,000 descriptors, 30 MiB
 * stayed out of the free memory it reported before). A memory hog (a
 * child touching 1 MiB after 1 MiB until the OOM killer ends it) measures
 * how much memory a program can have, once on a quiet kernel and once
 * right after 60,000 descriptors were opened and closed (4,000 held at a
 * time, so the table grows to its largest). On Linux the memory of closed
 * files is freed: the second hog gets as much as the first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OPENS = 60000, HELD = 4000 };

static long meminfo(const char *key) {
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			kib = atol(line + n + 1);
			break;
		}
	if (f)
		fclose(f);
	return kib;
}

static void show(const char *when) {
	printf("fdchurn: %s: MemFree %ld kB, MemAvailable %ld kB\n", when, meminfo("MemFree"), meminfo("MemAvailable"));
	fflush(stdout);
}

/* hog returns how many MiB a child touched before it was killed. */
static long hog(volatile long *mib) {
	*mib = 0;
	pid_t pid = fork();
	if (pid == 0)
		for (;;) {
			char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(1);
			memset(p, 1, 1 << 20);
			(*mib)++;
		}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		printf("fdchurn: the hog was not killed by SIGKILL: %#x\n", status);
	return *mib;
}

int main(void) {
	volatile long *mib = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct rlimit nofile = {HELD + 16, HELD + 16};
	static int fds[HELD];
	if (mib == MAP_FAILED || setrlimit(RLIMIT_NOFILE, &nofile) != 0 || close(open("/f", O_CREAT | O_RDWR, 0644)) != 0) {
		perror("fdchurn: setup");
		return 1;
	}
	sleep(12); /* the boot's garbage goes back to the frame allocator */
	show("quiet");
	printf("fdchurn: hog on a quiet kernel: %ld MiB\n", hog(mib));
	show("after the first hog");
	for (int done = 0; done < OPENS; done += HELD) {
		for (int i = 0; i < HELD && done + i < OPENS; i++)
			if ((fds[i] = open("/f", O_RDONLY)) < 0) {
				perror("fdchurn: open");
				return 1;
			}
		for (int i = 0; i < HELD && done + i < OPENS; i++)
			close(fds[i]);
	}
	show("after 60000 opened and closed");
	printf("fdchurn: hog after the descriptors: %ld MiB\n", hog(mib));
	show("after the second hog");
	return 0;
}
