/* Huge pages: the sizes /sys/kernel/mm/hugepages offers, the pool root
 * sets with nr_hugepages and /proc/meminfo counts (total, free, reserved),
 * and anonymous MAP_HUGETLB memory: reserved when mapped (ENOMEM when the
 * pool cannot promise it, a bus error on touch with MAP_NORESERVE and no
 * free page), taken on first touch, aligned to the page size for mmap,
 * munmap, mprotect and mremap, shared or copied across fork, given back
 * when unmapped. qemu-riscv64 would ask the host's pool, so Linux in QEMU
 * is the oracle. */
#include "../../conform/conform.h"
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define HPS (2UL << 20)

static int cmp(const void *a, const void *b) { return strcmp(*(char **)a, *(char **)b); }

static void sizes(void) {
	char *names[16];
	int n = 0;
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	if (d == NULL) {
		SHOW("sizes", "%s", strerrorname_np(errno));
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 16)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], cmp);
	for (int i = 0; i < n; i++)
		SHOW("size", "%s", names[i]);
}

static sigjmp_buf jump;
static void onbus(int sig) { siglongjmp(jump, sig); }

/* touch writes the byte at p and says which signal, if any, it raised. */
static const char *touch(volatile char *p) {
	struct sigaction sa = {.sa_handler = onbus};
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	int sig = sigsetjmp(jump, 1);
	if (sig == 0) {
		*p = 1;
		return "ok";
	}
	return sig == SIGBUS ? "SIGBUS" : "SIGSEGV";
}

static char *map(size_t len, int flags) {
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_HUGETLB | flags, -1, 0);
}

static void mapsLine(const char *name, void *addr) {
	char line[512], want[32];
	snprintf(want, sizeof want, "%lx-", (unsigned long)addr);
	FILE *f = fopen("/proc/self/maps", "r");
	while (f != NULL && fgets(line, sizeof line, f))
		if (strncmp(line, want, strlen(want)) == 0) {
			char perm[8], *path = strchr(line, '/');
			sscanf(strchr(line, ' ') + 1, "%7s", perm);
			if (path != NULL)
				path[strcspn(path, "\n")] = 0;
			SHOW(name, "%s %s", perm, path ? path : "(none)");
		}
	if (f != NULL)
		fclose(f);
}

int main(void) {
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/sys", 0755);
	mount("sysfs", "/sys", "sysfs", 0, NULL);

	sizes();
	SHOW("Hugepagesize", "%ld", meminfo_value("Hugepagesize:"));
	show_hugepages("empty pool");
	show_file("nr_hugepages", "/proc/sys/vm/nr_hugepages");

	char *p = map(HPS, MAP_SHARED);
	SHOW("map from an empty pool", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	p = map(HPS, MAP_PRIVATE);
	SHOW("private from an empty pool", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	p = map(HPS, MAP_SHARED | MAP_NORESERVE);
	SHOW("noreserve from an empty pool", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	if (p != MAP_FAILED) {
		SHOW("touch without a page", "%s", touch(p));
		RET("munmap noreserve", munmap(p, HPS));
	}
	p = map(HPS, MAP_SHARED | 16 << MAP_HUGE_SHIFT); /* 64 KiB: not offered */
	SHOW("64 KiB pages", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	p = map(1UL << 30, MAP_SHARED | 30 << MAP_HUGE_SHIFT);
	SHOW("1 GiB page, empty pool", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	int fd = open("/file", O_RDWR | O_CREAT, 0600);
	ftruncate(fd, HPS);
	p = mmap(NULL, HPS, PROT_READ, MAP_SHARED | MAP_HUGETLB, fd, 0);
	SHOW("file with MAP_HUGETLB", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	close(fd);

	put_file("nr_hugepages=x", "/proc/sys/vm/nr_hugepages", "x");
	put_file("nr_hugepages=4", "/proc/sys/vm/nr_hugepages", "4");
	show_file("nr_hugepages", "/proc/sys/vm/nr_hugepages");
	show_file("sysfs nr_hugepages", "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
	show_file("sysfs free_hugepages", "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
	show_hugepages("pool of 4");

	/* 3 MiB is two pages: reserved, not taken. */
	char *s = map(3UL << 20, MAP_SHARED);
	SHOW("shared 3 MiB", "%s", s == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	if (s == MAP_FAILED)
		return 1;
	SHOW("aligned", "%s", (unsigned long)s % HPS == 0 ? "yes" : "no");
	mapsLine("maps", s);
	show_hugepages("two reserved");
	SHOW("touch", "%s", touch(s));
	show_hugepages("one taken");
	show_file("sysfs resv_hugepages", "/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages");
	char *more = map(3 * HPS, MAP_SHARED);
	SHOW("three more pages", "%s", more == MAP_FAILED ? strerrorname_np(errno) : "mapped");

	RET("munmap a base page", munmap(s, 4096));
	RET("munmap from inside a page", munmap(s + 4096, HPS));
	RET("mprotect a base page", mprotect(s, 4096, PROT_READ));
	RET("mprotect a page", mprotect(s, HPS, PROT_READ));
	RET("mprotect back", mprotect(s, HPS, PROT_READ | PROT_WRITE));
	SHOW("mremap grow", "%s", mremap(s, 4 << 20, 6 << 20, MREMAP_MAYMOVE) == MAP_FAILED ? strerrorname_np(errno) : "moved");
	SHOW("mremap unaligned", "%s", mremap(s + 4096, 4096, 4096, 0) == MAP_FAILED ? strerrorname_np(errno) : "done");
	SHOW("mremap shrink in place", "%s", mremap(s, 4 << 20, 2 << 20, 0) == s ? "yes" : strerrorname_np(errno));
	show_hugepages("after shrinking");

	/* Shared: a child's write is seen; private: each has its own page. */
	s[100] = 'p';
	char *q = map(HPS, MAP_PRIVATE);
	SHOW("private", "%s", q == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	if (q == MAP_FAILED)
		return 1;
	mapsLine("private maps", q);
	q[100] = 'p';
	show_hugepages("shared and private taken");
	pid_t c = fork();
	if (c == 0) {
		s[100] = 'c';
		q[100] = 'c';
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	SHOW("child exited", "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	SHOW("shared after the child", "%c", s[100]);
	SHOW("private after the child", "%c", q[100]);
	show_hugepages("after the child");
	RET("madvise from inside a page", madvise(q + 4096, HPS, MADV_DONTNEED));
	RET("madvise a private page", madvise(q, HPS, MADV_DONTNEED));
	show_hugepages("private page dropped");
	SHOW("private after madvise", "%d", q[100]);
	RET("madvise a shared page", madvise(s, HPS, MADV_DONTNEED));
	SHOW("shared after madvise", "%c", s[100]);
	show_hugepages("after madvise");

	RET("munmap private", munmap(q, HPS));
	RET("munmap shared", munmap(s, HPS));
	show_hugepages("all unmapped");
	put_file("nr_hugepages=0", "/proc/sys/vm/nr_hugepages", "0");
	show_hugepages("pool emptied");

	/* Asking for more than memory holds gives what it can. */
	put_file("nr_hugepages=100000", "/proc/sys/vm/nr_hugepages", "100000");
	long got = meminfo_value("HugePages_Total:");
	SHOW("got some, not all", "%s", got > 0 && got < 100000 ? "yes" : "no");
	put_file("nr_hugepages=0 again", "/proc/sys/vm/nr_hugepages", "0");
	show_hugepages("pool emptied again");

	put_file("drop_caches=3", "/proc/sys/vm/drop_caches", "3");
	put_file("drop_caches=5", "/proc/sys/vm/drop_caches", "5");
	put_file("compact_memory=1", "/proc/sys/vm/compact_memory", "1");
	RET("read drop_caches", open("/proc/sys/vm/drop_caches", O_RDONLY));
	return 0;
}
