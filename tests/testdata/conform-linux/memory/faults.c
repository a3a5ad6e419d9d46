/* Page faults as getrusage and /proc/self/stat count them (ru_minflt):
 * anonymous memory faults once per page touched; a private mapping of a
 * file in memory, read in order, about once per 16 pages (fault-around's
 * 64 KiB windows); a waited-for child's faults move to RUSAGE_CHILDREN.
 * qemu-riscv64 reports the host's faults, so Linux itself is the oracle;
 * the counts are printed as ranges, since a few faults of the program's
 * own stack and data may land in them. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>

enum { pages = 256, page = 4096 };

static long minflt(int who) {
	struct rusage u;
	if (getrusage(who, &u) != 0)
		return -1;
	return u.ru_minflt;
}

static long statMinflt(void) {
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	long v = -1;
	/* state ppid pgrp session tty tpgid flags minflt */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", &v) != 1)
		return -1;
	return v;
}

static const char *within(long n, long lo, long hi) {
	return n >= lo && n <= hi ? "yes" : "no";
}

int main(void) {
	size_t len = (size_t)pages * page;
	char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return 1;
	long before = minflt(RUSAGE_SELF);
	for (int i = 0; i < pages; i++)
		a[i * page] = 1;
	long anon = minflt(RUSAGE_SELF) - before;
	SHOW("anonymous, 256 pages written: 256 to 272 faults", "%s", within(anon, pages, pages + 16));

	int fd = open("/faults.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, a, len) != (ssize_t)len)
		return 1;
	char *f = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED)
		return 1;
	before = minflt(RUSAGE_SELF);
	volatile char sum = 0;
	for (int i = 0; i < pages; i++)
		sum += f[i * page];
	long file = minflt(RUSAGE_SELF) - before;
	SHOW("file, 256 pages read in order: 16 to 32 faults", "%s", within(file, pages / 16, pages / 8));

	mkdir("/proc", 0555); /* Linux's init finds no /proc mounted */
	mount("proc", "/proc", "proc", 0, NULL);
	long self = minflt(RUSAGE_SELF), stat = statMinflt();
	SHOW("/proc/self/stat minflt matches getrusage", "%s", within(stat - self, 0, 4));

	pid_t pid = fork();
	if (pid == 0) {
		char *c = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (int i = 0; i < 64; i++)
			c[i * page] = 1;
		_exit(0);
	}
	SHOW("RUSAGE_CHILDREN before the wait", "%ld", minflt(RUSAGE_CHILDREN));
	waitpid(pid, NULL, 0);
	SHOW("RUSAGE_CHILDREN after a child wrote 64 pages: 64 or more", "%s", within(minflt(RUSAGE_CHILDREN), 64, 1000));
	return 0;
}
