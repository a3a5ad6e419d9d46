/* oomcopy: /init for tests/oom_test.go TestCopyIntoUntouchedUnderPressure.
 * A hog touches memory until the OOM killer ends it, while init has the
 * kernel copy into memory it never touched: read(2) from /dev/zero and
 * uname(2), each into a fresh mapping, so the kernel must find the page a
 * frame as the hog takes the last ones. On Linux the page allocator makes
 * room (the OOM killer ends the hog) and the copies succeed; any EFAULT
 * or short read is counted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 3
#define CHUNK (64 << 10)

int main(void) {
	int zero = open("/dev/zero", O_RDONLY);
	if (zero < 0) {
		printf("oomcopy: open /dev/zero: %s\n", strerror(errno));
		return 1;
	}
	for (int r = 1; r <= ROUNDS; r++) {
		pid_t hog = fork();
		if (hog == 0) {
			for (;;) {
				char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (p != MAP_FAILED)
					memset(p, 1, 1 << 20);
			}
		}
		long reads = 0, badReads = 0, unames = 0, badUnames = 0;
		int status;
		while (waitpid(hog, &status, WNOHANG) == 0) {
			char *p = mmap(NULL, CHUNK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				continue;
			reads++;
			ssize_t n = read(zero, p, CHUNK);
			if (n != CHUNK && badReads++ == 0)
				printf("oomcopy: read gave %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
			unames++;
			if (uname((struct utsname *)(p + CHUNK)) != 0)
				badUnames++;
			munmap(p, CHUNK + 4096);
		}
		printf("oomcopy: round %d: hog ended by signal %d; reads %ld, failed %ld; unames %ld, failed %ld\n", r,
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0, reads, badReads, unames, badUnames);
	}
	return 0;
}
