/* splice, tee and copy_file_range: bytes between pipes, files and
 * sockets without user buffers; offsets given or the file position;
 * Linux's errors for the wrong kinds of descriptors. */
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void contents(const char *name, int fd, int n) {
	char buf[64] = {0};
	int r = read(fd, buf, n < 63 ? n : 63);
	printf("%s: %d \"%s\"\n", name, r, r > 0 ? buf : "");
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	int p[2], q[2];
	pipe(p);
	pipe(q);
	int f = open("src", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(f, "0123456789abcdef", 16);
	int g = open("dst", O_CREAT | O_RDWR | O_TRUNC, 0644);

	/* File to pipe at an offset: the offset moves, the position does not. */
	loff_t off = 4;
	RET("file to pipe at offset", splice(f, &off, p[1], NULL, 6, 0));
	SHOW("offset after", "%lld", (long long)off);
	RET("position after", lseek(f, 0, SEEK_CUR));
	/* File to pipe at the position: it moves. */
	lseek(f, 10, SEEK_SET);
	RET("file to pipe at position", splice(f, NULL, p[1], NULL, 100, 0));
	RET("position after it", lseek(f, 0, SEEK_CUR));
	RET("at end of file", splice(f, NULL, p[1], NULL, 100, 0));

	/* tee copies, leaving the bytes; splice between pipes moves them. */
	RET("tee", tee(p[0], q[1], 3, 0));
	contents("tee'd bytes", q[0], 3);
	RET("pipe to pipe", splice(p[0], NULL, q[1], NULL, 4, 0));
	contents("moved bytes", q[0], 4);

	/* Pipe to file at an offset, then the rest at the position. */
	off = 2;
	RET("pipe to file at offset", splice(p[0], NULL, g, &off, 3, 0));
	SHOW("dst offset after", "%lld", (long long)off);
	RET("pipe to file", splice(p[0], NULL, g, NULL, 100, SPLICE_F_NONBLOCK));
	RET("empty pipe, nonblocking", splice(p[0], NULL, g, NULL, 100, SPLICE_F_NONBLOCK));
	lseek(g, 0, SEEK_SET);
	char buf[32] = {0};
	int r = read(g, buf, sizeof buf);
	for (int i = 0; i < r; i++)
		if (buf[i] == 0)
			buf[i] = '.';
	printf("dst: %d \"%s\"\n", r, buf);

	/* Pipe to socket and socket to pipe. */
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	write(p[1], "hello", 5);
	RET("pipe to socket", splice(p[0], NULL, s[0], NULL, 5, 0));
	RET("socket to pipe", splice(s[1], NULL, q[1], NULL, 100, 0));
	contents("through the socket", q[0], 5);
	RET("empty socket, SPLICE_F_NONBLOCK", splice(s[1], NULL, q[1], NULL, 100, SPLICE_F_NONBLOCK));

	/* Errors. */
	RET("zero length, bad fd", splice(-1, NULL, -1, NULL, 0, 0));
	RET("bad flags", splice(p[0], NULL, q[1], NULL, 1, 0x100));
	RET("bad fd", splice(99, NULL, q[1], NULL, 1, 0));
	RET("no pipe", splice(f, NULL, g, NULL, 1, 0));
	off = 0;
	RET("offset on a pipe", splice(p[0], &off, g, NULL, 1, 0));
	RET("pipe into itself", splice(p[0], NULL, p[1], NULL, 1, SPLICE_F_NONBLOCK));
	RET("write end as input", splice(p[1], NULL, g, NULL, 1, 0));
	int ap = open("dst", O_WRONLY | O_APPEND);
	write(p[1], "x", 1);
	RET("to an O_APPEND file", splice(p[0], NULL, ap, NULL, 1, 0));
	off = -1;
	RET("negative offset", splice(f, &off, p[1], NULL, 1, 0));
	int o[2];
	pipe(o);
	RET("offset and length past the largest", splice(f, &(loff_t){0x7ffffffffffffffeLL}, o[1], NULL, 10, 0));
	RET("tee of a file", tee(f, q[1], 1, 0));
	RET("tee, empty, nonblocking", tee(q[0], p[1], 1, SPLICE_F_NONBLOCK));
	close(q[0]);
	RET("to a pipe without reader", splice(f, &(loff_t){0}, q[1], NULL, 1, 0));
	/* A full pipe, non-blocking. */
	int full[2];
	pipe(full);
	fcntl(full[1], F_SETFL, O_NONBLOCK);
	char page[4096] = {0};
	while (write(full[1], page, sizeof page) > 0)
		;
	RET("into a full pipe, O_NONBLOCK", splice(f, &(loff_t){0}, full[1], NULL, 1, 0));

	/* A blocking splice waits for the writer, and a full pipe for room. */
	int b[2];
	pipe(b);
	if (fork() == 0) {
		usleep(100000);
		write(b[1], "late", 4);
		_exit(0);
	}
	RET("blocking splice waits for the writer", splice(b[0], NULL, g, &(loff_t){0}, 10, 0));
	wait(NULL);
	fcntl(full[1], F_SETFL, 0);
	if (fork() == 0) {
		usleep(100000);
		char drain[8192];
		read(full[0], drain, sizeof drain);
		_exit(0);
	}
	RET("blocking splice waits for room", splice(f, &(loff_t){0}, full[1], NULL, 3, 0));
	wait(NULL);

	/* copy_file_range. */
	loff_t in = 0, out = 0;
	int h = open("copy", O_CREAT | O_RDWR | O_TRUNC, 0644);
	RET("copy_file_range", copy_file_range(f, &in, h, &out, 100, 0));
	SHOW("offsets after", "%lld %lld", (long long)in, (long long)out);
	lseek(f, 3, SEEK_SET);
	RET("copy_file_range at positions", copy_file_range(f, NULL, h, NULL, 5, 0));
	RET("positions after", lseek(f, 0, SEEK_CUR) * 100 + lseek(h, 0, SEEK_CUR));
	lseek(h, 0, SEEK_SET);
	contents("copy", h, 30);
	RET("copy_file_range past the end", copy_file_range(f, &(loff_t){100}, h, NULL, 5, 0));
	RET("copy_file_range offset past the largest", copy_file_range(f, &(loff_t){0x7ffffffffffffffeLL}, h, NULL, 10, 0));
	RET("copy_file_range bad flags", copy_file_range(f, NULL, h, NULL, 5, 1));
	RET("copy_file_range from a pipe", copy_file_range(p[0], NULL, h, NULL, 5, 0));
	RET("copy_file_range overlapping", copy_file_range(f, &(loff_t){0}, f, &(loff_t){4}, 8, 0));
	RET("copy_file_range to O_APPEND", copy_file_range(f, &(loff_t){0}, ap, NULL, 5, 0));

	/* Files with no splice_read or splice_write: EINVAL, not a wait. */
	int np[2];
	pipe(np);
	mkdir("splice.dir", 0755);
	int dir = open("splice.dir", O_RDONLY | O_DIRECTORY), efd = eventfd(0, 0);
	RET("splice from a directory", splice(dir, NULL, np[1], NULL, 1, 0));
	RET("splice from an empty eventfd", splice(efd, NULL, np[1], NULL, 1, 0));
	write(np[1], "x", 1);
	RET("splice into an eventfd", splice(np[0], NULL, efd, NULL, 1, 0));
	return 0;
}
