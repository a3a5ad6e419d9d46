/* readv and writev whose second iovec is a bad address: what Linux does
 * with the first one, file kind by file kind. A pipe's read copies a
 * whole buffer of the pipe or fails with EFAULT (taking nothing), its
 * write fails and writes nothing. qemu-user drops a bad iovec after the
 * first and calls the host with the rest, so Linux itself is the
 * oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>

static void show_rest(const char *name, int fd)
{
	char rest[32] = {0};
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	long n = read(fd, rest, sizeof rest);
	SHOW(name, "%ld %s %.*s", n, n < 0 ? strerrorname_np(errno) : "", n > 0 ? (int)n : 0, rest);
}

int main(void)
{
	char buf[8];
	int fds[2];

	pipe(fds);
	write(fds[1], "0123456789", 10);
	memset(buf, '.', sizeof buf);
	struct iovec rv[] = {{buf, 5}, {NULL, 5}};
	RET("pipe.readv", readv(fds[0], rv, 2));
	SHOW("pipe.readv.first", "%.5s", buf);
	show_rest("pipe.readv.left", fds[0]);

	struct iovec wv[] = {{"abcde", 5}, {NULL, 5}};
	RET("pipe.writev", writev(fds[1], wv, 2));
	show_rest("pipe.writev.written", fds[0]);

	struct iovec first_bad[] = {{NULL, 5}, {buf, 5}};
	write(fds[1], "0123456789", 10);
	RET("pipe.readv.first.bad", readv(fds[0], first_bad, 2));
	show_rest("pipe.readv.first.bad.left", fds[0]);

	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[0], "0123456789", 10);
	memset(buf, '.', sizeof buf);
	RET("socket.readv", readv(sv[1], rv, 2));
	SHOW("socket.readv.first", "%.5s", buf);
	show_rest("socket.readv.left", sv[1]);
	RET("socket.writev", writev(sv[0], wv, 2));
	show_rest("socket.writev.written", sv[1]);

	int fd = open("/iovec.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, "0123456789", 10);
	lseek(fd, 0, SEEK_SET);
	memset(buf, '.', sizeof buf);
	RET("file.readv", readv(fd, rv, 2));
	SHOW("file.readv.first", "%.5s", buf);
	RET("file.readv.offset", lseek(fd, 0, SEEK_CUR));
	RET("file.writev", writev(fd, wv, 2));
	RET("file.writev.offset", lseek(fd, 0, SEEK_CUR));
	lseek(fd, 0, SEEK_SET);
	show_rest("file.contents", fd);
	return 0;
}
