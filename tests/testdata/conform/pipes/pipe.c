/* Pipes: data in order, end of file, EPIPE, non-blocking ends, capacity,
 * PIPE_BUF atomicity, status flags, fstat, a pipe between two processes. */
#include "../conform.h"
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	int p[2];
	char buf[256];
	RET("pipe2", pipe2(p, 0));
	SHOW("fds", "%d %d", p[0], p[1]);
	RET("getfl.read", fcntl(p[0], F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	RET("getfl.write", fcntl(p[1], F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	RET("write", write(p[1], "abc", 3));
	RET("write.more", write(p[1], "defg", 4));
	int avail = -1;
	RET("fionread", ioctl(p[0], FIONREAD, &avail));
	SHOW("fionread.value", "%d", avail);
	RET("read.part", read(p[0], buf, 5));
	SHOW("read.part.data", "%.5s", buf);
	RET("read.rest", read(p[0], buf, sizeof buf));
	SHOW("read.rest.data", "%.2s", buf);
	RET("write.to.read.end", write(p[0], "x", 1));
	RET("read.from.write.end", read(p[1], buf, 1));
	struct stat st;
	RET("fstat", fstat(p[0], &st));
	SHOW("fstat.fifo", "%d", S_ISFIFO(st.st_mode));
	RET("lseek", lseek(p[0], 0, SEEK_SET));
	RET("pread", pread(p[0], buf, 1, 0));

	RET("setfl.nonblock", fcntl(p[0], F_SETFL, O_NONBLOCK));
	RET("read.empty.nonblock", read(p[0], buf, 1));
	RET("getpipe.size", fcntl(p[1], F_GETPIPE_SZ));
	RET("setfl.write.nonblock", fcntl(p[1], F_SETFL, O_NONBLOCK));
	long total = 0;
	char chunk[1000];
	memset(chunk, 'z', sizeof chunk);
	for (;;) {
		long n = write(p[1], chunk, sizeof chunk);
		if (n < 0)
			break;
		total += n;
	}
	SHOW("filled.errno", "%s", strerrorname_np(errno));
	SHOW("filled.total", "%ld", total);
	RET("read.some", read(p[0], buf, 100));
	RET("write.atomic.no.room", write(p[1], chunk, 200));
	RET("write.fits", write(p[1], chunk, 100));
	RET("setpipe.size.small", fcntl(p[1], F_SETPIPE_SZ, 4096));
	RET("setpipe.size.big", fcntl(p[1], F_SETPIPE_SZ, 200000));
	RET("close.write", close(p[1]));
	long drained = 0;
	for (;;) {
		long n = read(p[0], buf, sizeof buf);
		if (n <= 0) {
			RET("read.eof", n);
			break;
		}
		drained += n;
	}
	SHOW("drained", "%ld", drained);
	RET("close.read", close(p[0]));

	RET("pipe2.again", pipe2(p, O_CLOEXEC | O_NONBLOCK));
	RET("getfd.cloexec", fcntl(p[0], F_GETFD));
	RET("getfl.nonblock", fcntl(p[1], F_GETFL) & O_NONBLOCK);
	RET("close.reader", close(p[0]));
	RET("write.no.reader", write(p[1], "x", 1));
	RET("pipe2.badflags", pipe2(p, O_APPEND));
	RET("pipe2.badptr", pipe2((int *)BAD, 0));
	close(p[1]);

	/* A child writes through a pipe; the parent reads to end of file. */
	RET("pipe2.fork", pipe2(p, 0));
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < 100; i++)
			dprintf(p[1], "line %d\n", i);
		_exit(7);
	}
	close(p[1]);
	long got = 0, lines = 0;
	for (;;) {
		long n = read(p[0], buf, sizeof buf);
		if (n <= 0)
			break;
		for (long i = 0; i < n; i++)
			lines += buf[i] == '\n';
		got += n;
	}
	SHOW("child.bytes", "%ld", got);
	SHOW("child.lines", "%ld", lines);
	int status;
	waitpid(pid, &status, 0);
	SHOW("child.status", "%d", WEXITSTATUS(status));

	/* A blocking writer larger than the pipe, drained by a reader. */
	RET("pipe2.big", pipe2(p, 0));
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		static char big[300000];
		memset(big, 'q', sizeof big);
		long n = write(p[1], big, sizeof big);
		_exit(n == sizeof big ? 0 : 1);
	}
	close(p[1]);
	got = 0;
	for (;;) {
		long n = read(p[0], buf, sizeof buf);
		if (n <= 0)
			break;
		got += n;
	}
	SHOW("big.bytes", "%ld", got);
	waitpid(pid, &status, 0);
	SHOW("big.writer.status", "%d", WEXITSTATUS(status));
	return 0;
}
