/* File-backed mappings and the file's reads and writes: a MAP_SHARED
 * mapping sees write() at once and read() sees its stores, across fork,
 * between two mappings and between two processes that map the file on
 * their own; the stores stay in the file after munmap. A MAP_PRIVATE
 * mapping shows what the file holds when it first touches a page and
 * keeps its own writes; after its copy it no longer sees the file's
 * changes. mremap moves a shared mapping with its pages. Descriptors
 * opened read-only cannot be mapped shared and
 * writable. */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PG 4096
#define RW (PROT_READ | PROT_WRITE)

static char at(int fd, off_t off)
{
	char c = '?';
	if (pread(fd, &c, 1, off) != 1)
		return '-';
	return c;
}

int main(void)
{
	int fd = open("filemap.data", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[2 * PG];
	memset(buf, 'a', sizeof buf);
	RET("write two pages", write(fd, buf, sizeof buf));

	char *p = mmap(NULL, 2 * PG, RW, MAP_SHARED, fd, 0);
	SHOW("shared mapping", "%s", p == MAP_FAILED ? strerrorname_np(errno) : "ok");
	RET("pwrite", pwrite(fd, "hello", 5, 100));
	SHOW("the mapping sees the write", "%.5s", p + 100);
	p[PG + 10] = 'Z';
	SHOW("read sees the store", "%c", at(fd, PG + 10));
	RET("msync", msync(p, 2 * PG, MS_SYNC));

	char *q = mmap(NULL, 2 * PG, PROT_READ, MAP_SHARED, fd, 0);
	p[11] = 'Q';
	SHOW("a second mapping sees the store", "%c%c", q[11], q[PG + 10]);

	pid_t pid = fork();
	if (pid == 0) {
		p[12] = 'C';
		pwrite(fd, "W", 1, 13);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	SHOW("after fork: the child's store and write", "%c%c %c%c", p[12], p[13], at(fd, 12), at(fd, 13));

	pid = fork();
	if (pid == 0) {
		int fd2 = open("filemap.data", O_RDWR);
		char *r = mmap(NULL, PG, RW, MAP_SHARED, fd2, 0);
		if (r == MAP_FAILED)
			_exit(1);
		r[14] = 'O';
		_exit(r[11] == 'Q' ? 0 : 2);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("another process's own mapping", "status %d, store seen here %c", WEXITSTATUS(status), p[14]);

	/* Private: the file as it is when a page is first touched. */
	char *v = mmap(NULL, 2 * PG, RW, MAP_PRIVATE, fd, 0);
	pwrite(fd, "1", 1, 20);
	p[21] = '2';
	SHOW("private first touch", "%c%c", v[20], v[21]);
	v[22] = 'P';
	SHOW("private write stays private", "%c %c %c", v[22], p[22], at(fd, 22));
	pwrite(fd, "3", 1, 23);
	p[24] = '4';
	SHOW("after its copy, private sees neither", "%c%c", v[23], v[24]);
	SHOW("private second page, untouched", "%c", v[PG + 10]);

	/* Moved by mremap, a shared mapping still shows the file. */
	char *g = mremap(q, 2 * PG, 3 * PG, MREMAP_MAYMOVE);
	SHOW("mremap shared", "%s", g == MAP_FAILED ? strerrorname_np(errno) : "ok");
	q = g;
	p[15] = 'M';
	SHOW("the moved mapping", "%c%c", q[15], q[PG + 10]);

	RET("munmap shared", munmap(p, 2 * PG));
	RET("munmap second", munmap(q, 3 * PG));
	RET("munmap private", munmap(v, 2 * PG));
	char back[32];
	RET("pread after munmap", pread(fd, back, 25, 0));
	SHOW("the stores stayed", "%.25s", back);
	SHOW("second page", "%c", at(fd, PG + 10));

	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
	SHOW("mapped again", "%.25s", p);
	munmap(p, PG);

	/* A store past the end of the file, in its last page, is not in it. */
	RET("ftruncate", ftruncate(fd, 100));
	p = mmap(NULL, PG, RW, MAP_SHARED, fd, 0);
	SHOW("past the end reads zero", "%d", p[200]);
	p[50] = 'E';
	p[200] = 'x';
	struct stat st;
	fstat(fd, &st);
	SHOW("size after a store past it", "%lld, at 50 %c, at 200 %c", (long long)st.st_size, at(fd, 50), at(fd, 200));
	RET("write extends", pwrite(fd, "y", 1, 300));
	SHOW("the mapping sees the extension", "%c", p[300]);
	munmap(p, PG);
	close(fd);

	int ro = open("filemap.data", O_RDONLY);
	void *m = mmap(NULL, PG, RW, MAP_SHARED, ro, 0);
	SHOW("read-only fd, shared writable", "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, ro, 0);
	SHOW("read-only fd, shared read-only", "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	m = mmap(NULL, PG, RW, MAP_PRIVATE, ro, 0);
	SHOW("read-only fd, private writable", "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	close(ro);
	int wo = open("filemap.data", O_WRONLY);
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, wo, 0);
	SHOW("write-only fd", "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	close(wo);
	unlink("filemap.data");
	return 0;
}
