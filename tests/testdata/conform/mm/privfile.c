/* MAP_PRIVATE file mappings as Linux keeps them: a page the mapping has
 * only read is the file's page, so it shows later write(2)s and stores
 * through a shared mapping, also after fork and through PROT_READ and an
 * mprotect to writable; the first store gives the mapping its own copy,
 * which sees the file no more until MADV_DONTNEED drops it. A page wholly
 * past the end of the file is SIGBUS (BUS_ADRERR) in a private or shared
 * mapping, also after ftruncate, and EFAULT to a system call; the part of
 * the last page past the end reads as zeros. A truncate takes away the
 * pages past the new end that processes had mapped, private copies too;
 * so does open with O_TRUNC. */
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PG 4096
#define RW (PROT_READ | PROT_WRITE)

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	printf("  signal %s, code %s\n", sigabbrev_np(sig), si->si_code == BUS_ADRERR ? "BUS_ADRERR" : "other");
	fflush(stdout);
	_exit(3);
}

/* access reads (or writes) *p with the SIGBUS handler in place. */
static void access_(volatile char *p, int write)
{
	struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
	sigaction(SIGBUS, &sa, NULL);
	if (write)
		*p = 'w';
	else
		printf("  read %d\n", *p);
	fflush(stdout);
}

static void reap(pid_t pid)
{
	int status;
	waitpid(pid, &status, 0);
	SHOW("  child", "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* touch reads (or writes) *p in a child and shows how the child ended. */
static void touch(const char *name, volatile char *p, int write)
{
	printf("%s:\n", name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		access_(p, write);
		_exit(0);
	}
	reap(pid);
}

int main(void)
{
	int fd = open("privfile.data", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[3 * PG];
	memset(buf, 'a', sizeof buf);
	RET("write three pages", write(fd, buf, sizeof buf));

	char *v = mmap(NULL, 4 * PG, RW, MAP_PRIVATE, fd, 0);
	char *p = mmap(NULL, 3 * PG, RW, MAP_SHARED, fd, 0);
	const char *r = mmap(NULL, 3 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
	SHOW("mappings", "%s", v == MAP_FAILED || p == MAP_FAILED || r == MAP_FAILED ? "failed" : "ok");
	SHOW("first read", "%c %c %c", v[0], v[PG], r[0]);

	/* Read, not written: the file's page. */
	RET("pwrite", pwrite(fd, "X", 1, 0));
	p[1] = 'S';
	SHOW("a page only read sees write(2) and a shared store", "%c%c %c%c", v[0], v[1], r[0], r[1]);

	/* Written: a copy of its own, blind to the file from then on. */
	v[2] = 'P';
	RET("pwrite after the copy", pwrite(fd, "Y", 1, 3));
	p[4] = 'T';
	char at[8] = {0};
	pread(fd, at, 5, 0);
	SHOW("the copied page", "%.5s, file %.5s", v, at);
	SHOW("another page only read", "%c", v[PG]);
	RET("pwrite page two", pwrite(fd, "Z", 1, PG));
	SHOW("sees it", "%c", v[PG]);

	/* After fork parent and child both still see the file's page. */
	pid_t pid = fork();
	if (pid == 0) {
		pwrite(fd, "F", 1, PG + 1);
		_exit(v[PG] == 'Z' ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("fork", "child %d, parent sees the child's write %c", WEXITSTATUS(status), v[PG + 1]);
	pid = fork();
	if (pid == 0) {
		v[PG + 2] = 'c';
		_exit(v[PG + 2] == 'c' ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	SHOW("a child's store", "child %d, parent %c, file %c", WEXITSTATUS(status), v[PG + 2], p[PG + 2]);

	/* mprotect to writable does not write into the file. */
	RET("mprotect read-only private to writable", mprotect((void *)r, PG, RW));
	((char *)r)[5] = 'M';
	SHOW("the store", "%c, file %c", r[5], p[5]);
	RET("pwrite", pwrite(fd, "N", 1, 6));
	SHOW("the written page no longer sees the file", "%c", r[6]);

	/* MADV_DONTNEED drops the copy: the file shows again. */
	RET("madvise MADV_DONTNEED", madvise(v, PG, MADV_DONTNEED));
	SHOW("after it", "%.8s", v);

	/* Past the end of the file. */
	touch("private, page past the end, read", v + 3 * PG, 0);
	touch("private, page past the end, write", v + 3 * PG, 1);
	RET("write(2) from a page past the end", write(fd, v + 3 * PG, 1));
	RET("ftruncate to a page and a half", ftruncate(fd, PG + PG / 2));
	SHOW("the last page past the end reads zero", "%d %d", v[PG + PG / 2 + 10], p[PG + PG / 2 + 10]);
	touch("shared, page past the new end, read", p + 2 * PG, 0);
	touch("shared, page past the new end, write", p + 2 * PG, 1);
	touch("private, page past the new end, read", v + 2 * PG + 8, 0);
	RET("pread(2) into a page past the end", pread(fd, p + 2 * PG, 1, 0));
	RET("ftruncate back to three pages", ftruncate(fd, 3 * PG));
	SHOW("the pages past the old end read zero", "%d %d", v[2 * PG + 8], p[2 * PG + 9]);

	/* Mapped, then truncated away: here and in a process forked before. */
	v[2 * PG] = 'q';
	SHOW("mapped before the truncate", "%c%c %c%d", v[PG], v[2 * PG], p[PG], p[2 * PG]);
	int go[2];
	pipe(go);
	pid_t later = fork();
	if (later == 0) {
		char c;
		read(go[0], &c, 1);
		printf("forked before the truncate, shared page two:\n");
		access_(p + 2 * PG, 0);
		_exit(0);
	}
	RET("ftruncate to half a page", ftruncate(fd, PG / 2));
	touch("shared, a page it had mapped", p + PG, 0);
	touch("private, the file's page it had mapped", v + PG, 0);
	touch("private, its own copy", v + 2 * PG, 1);
	write(go[1], "g", 1);
	reap(later);
	SHOW("the first page stays", "%c %c %d", v[0], p[0], p[PG / 2 + 1]);
	RET("open with O_TRUNC", close(open("privfile.data", O_RDWR | O_TRUNC)));
	touch("shared, the first page after O_TRUNC", p, 0);
	touch("private, the first page after O_TRUNC", v, 0);
	unlink("privfile.data");
	return 0;
}
