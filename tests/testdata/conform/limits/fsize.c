/* RLIMIT_FSIZE on regular files: a write that would pass the limit is cut
 * short at it, one that starts at or past it fails with EFBIG after
 * SIGXFSZ (which, unhandled, ends the process); pwrite, O_APPEND and a
 * growing truncate are limited too, a shrinking truncate and a pipe are
 * not. Each case runs in a fork child: the limit cannot be raised back
 * (the host's root lacks CAP_SYS_RESOURCE). */
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

static volatile int signals;

static void xfsz(int sig) {
	(void)sig;
	signals++;
}

static void limit(rlim_t n) {
	struct rlimit l;
	getrlimit(RLIMIT_FSIZE, &l);
	l.rlim_cur = n;
	setrlimit(RLIMIT_FSIZE, &l);
}

static void handled(void) {
	char buf[256];
	memset(buf, 'x', sizeof buf);
	signal(SIGXFSZ, xfsz);
	int fd = open("fsize.data", O_RDWR | O_CREAT | O_TRUNC, 0644);
	limit(100);
	RET("write 60", write(fd, buf, 60));
	RET("write 60 more", write(fd, buf, 60));
	SHOW("signals", "%d", signals);
	RET("write at the limit", write(fd, buf, 1));
	SHOW("signals", "%d", signals);
	RET("write 0 at the limit", write(fd, buf, 0));
	SHOW("signals", "%d", signals);
	RET("pwrite past the limit", pwrite(fd, buf, 10, 200));
	RET("pwrite across the limit", pwrite(fd, buf, 20, 90));
	RET("writev at the limit", writev(fd, &(struct iovec){buf, 5}, 1));
	SHOW("signals", "%d", signals);
	RET("ftruncate shrink", ftruncate(fd, 50));
	RET("ftruncate to the limit", ftruncate(fd, 100));
	RET("ftruncate past the limit", ftruncate(fd, 150));
	SHOW("signals", "%d", signals);
	RET("truncate past the limit", truncate("fsize.data", 101));
	SHOW("signals", "%d", signals);
	struct stat st;
	fstat(fd, &st);
	SHOW("size", "%lld", (long long)st.st_size);
	int afd = open("fsize.data", O_WRONLY | O_APPEND);
	RET("O_APPEND write at the limit", write(afd, buf, 10));
	ftruncate(fd, 95);
	RET("O_APPEND write across the limit", write(afd, buf, 10));
	SHOW("signals", "%d", signals);
	int p[2];
	pipe(p);
	RET("pipe write past the limit", write(p[1], buf, 200));
	close(fd);
	close(afd);
	unlink("fsize.data");
}

int main(void) {
	/* The child reports through a pipe: its limit would stop its writes
	 * to a stdout that is a file. */
	int out[2];
	pipe(out);
	pid_t pid = fork();
	if (pid == 0) {
		close(out[0]);
		dup2(out[1], 1);
		handled();
		_exit(0);
	}
	close(out[1]);
	char buf[512];
	for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
		fwrite(buf, 1, n, stdout);
	fflush(stdout);
	int st;
	waitpid(pid, &st, 0);
	SHOW("handled child exit", "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

	pid = fork();
	if (pid == 0) {
		int fd = open("fsize.kill", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		limit(10);
		write(fd, "0123456789", 10);
		write(fd, "x", 1);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	SHOW("unhandled child ended by", "%s", WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "exit");
	struct stat s;
	stat("fsize.kill", &s);
	SHOW("its file's size", "%lld", (long long)s.st_size);
	unlink("fsize.kill");
	return 0;
}
