/* dup, dup2, dup3 and F_DUPFD: shared offsets and status flags, per-fd
 * close-on-exec, errors. */
#include "../conform.h"
#include <fcntl.h>

int main(void) {
	char buf[16] = {0};
	int fd = open("d", O_CREAT | O_RDWR | O_TRUNC, 0644);
	SHOW("open", "%d", fd);
	RET("write", write(fd, "0123456789", 10));
	RET("dup", dup(fd));
	RET("lseek.dup", lseek(4, 2, SEEK_SET));
	RET("offset.shared", lseek(fd, 0, SEEK_CUR));
	RET("read.orig", read(fd, buf, 3));
	SHOW("read.orig.data", "%.3s", buf);
	RET("offset.after.read", lseek(4, 0, SEEK_CUR));
	RET("setfl.append", fcntl(4, F_SETFL, O_APPEND));
	RET("getfl.append.shared", (fcntl(fd, F_GETFL) & O_APPEND) != 0);
	RET("append.write", write(fd, "X", 1));
	RET("size.after.append", lseek(fd, 0, SEEK_END));
	RET("dup2", dup2(fd, 9));
	RET("dup2.same", dup2(9, 9));
	RET("dup3.same", dup3(9, 9, 0));
	RET("dup3.cloexec", dup3(fd, 10, O_CLOEXEC));
	RET("getfd.10", fcntl(10, F_GETFD));
	RET("getfd.9", fcntl(9, F_GETFD));
	RET("dup3.badflags", dup3(fd, 11, 1));
	RET("dup.bad", dup(99));
	RET("dup2.bad.old", dup2(99, 12));
	RET("dup2.negative.new", dup2(fd, -1));
	RET("dup2.huge.new", dup2(fd, 1 << 20));
	RET("dupfd.cloexec", fcntl(fd, F_DUPFD_CLOEXEC, 20));
	RET("getfd.20", fcntl(20, F_GETFD));
	RET("dupfd.negative", fcntl(fd, F_DUPFD, -1));
	RET("dupfd.huge", fcntl(fd, F_DUPFD, 1 << 20));
	/* dup2 over an open descriptor closes it silently. */
	int other = open("e", O_CREAT | O_RDWR | O_TRUNC, 0644);
	SHOW("open.other", "%d", other);
	RET("dup2.over", dup2(fd, other));
	RET("offset.via.over", lseek(other, 0, SEEK_CUR));
	RET("close.orig", close(fd));
	RET("still.open.via.dup", lseek(4, 0, SEEK_SET));
	RET("read.via.dup", read(4, buf, 4));
	SHOW("read.via.dup.data", "%.4s", buf);
	RET("getfl.access", fcntl(4, F_GETFL) & O_ACCMODE);
	RET("setfl.ignores.access", fcntl(4, F_SETFL, O_RDONLY));
	RET("getfl.access.kept", fcntl(4, F_GETFL) & O_ACCMODE);
	RET("fcntl.bad.cmd", fcntl(4, 12345));
	return 0;
}
