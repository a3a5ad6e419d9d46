/* pwrite on a description with O_APPEND writes at the end of the file
 * whatever its offset, and moves no file position (Linux's documented
 * behaviour, pwrite(2) BUGS); without O_APPEND (F_SETFL) the offset
 * holds again. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/uio.h>

static void show(const char *name, int fd)
{
	char buf[64] = {0};
	long n = pread(fd, buf, sizeof buf - 1, 0);
	SHOW(name, "%ld %s", n, buf);
}

int main(void)
{
	int fd = open("pwa.dat", O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644);
	write(fd, "0123456789", 10);
	RET("position after write", lseek(fd, 0, SEEK_CUR));
	lseek(fd, 2, SEEK_SET);
	RET("pwrite at 0", pwrite(fd, "ab", 2, 0));
	show("contents", fd);
	RET("position kept", lseek(fd, 0, SEEK_CUR));
	RET("pwrite past the end", pwrite(fd, "cd", 2, 100));
	show("contents", fd);
	struct iovec v[] = {{"e", 1}, {"f", 1}};
	RET("pwritev at 1", pwritev(fd, v, 2, 1));
	show("contents", fd);
	RET("position still", lseek(fd, 0, SEEK_CUR));

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_APPEND);
	RET("pwrite at 0 without O_APPEND", pwrite(fd, "XY", 2, 0));
	show("contents", fd);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND);
	RET("pwrite at 0 with O_APPEND again", pwrite(fd, "Z", 1, 0));
	show("contents", fd);
	return 0;
}
