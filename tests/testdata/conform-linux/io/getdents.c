/* getdents64 into a bad buffer fails with EFAULT and consumes nothing:
 * the next call with a good buffer returns every entry. qemu-user reads
 * the entries on the host before it finds the buffer bad, and loses
 * them, so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static int count_entries(int fd)
{
	char buf[4096];
	int entries = 0;
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n; off += ((struct dirent64 *)(buf + off))->d_reclen)
			entries++;
	return n < 0 ? -1 : entries;
}

int main(void)
{
	mkdir("getdents.d", 0755);
	close(open("getdents.d/a", O_CREAT | O_WRONLY, 0644));
	close(open("getdents.d/b", O_CREAT | O_WRONLY, 0644));
	mkdir("getdents.d/c", 0755);

	int fd = open("getdents.d", O_RDONLY | O_DIRECTORY);
	RET("bad buffer", syscall(SYS_getdents64, fd, BAD, 4096));
	RET("bad buffer again", syscall(SYS_getdents64, fd, BAD, 4096));
	SHOW("entries after", "%d", count_entries(fd));
	RET("at the end, bad buffer", syscall(SYS_getdents64, fd, BAD, 4096));

	lseek(fd, 0, SEEK_SET);
	char buf[4096];
	RET("small buffer", syscall(SYS_getdents64, fd, buf, 8));
	RET("small bad buffer", syscall(SYS_getdents64, fd, BAD, 8));
	SHOW("entries after rewind", "%d", count_entries(fd));

	/* A buffer with room for "." and ".." before an unmapped page. */
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p + 4096, 4096);
	lseek(fd, 0, SEEK_SET);
	RET("buffer ends in a hole", syscall(SYS_getdents64, fd, p + 4096 - 48, 4096));
	SHOW("entries after the hole", "%d", count_entries(fd));
	return 0;
}
