/* Record locks as F_GETLK reports them: the first conflicting lock in
 * Linux's list order (an owner's locks by start), adjacent locks of one
 * type merged; F_SETLKW's deadlock detection (EDEADLK); EFAULT for a bad
 * struct flock even on a descriptor that is not a file. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

static int lk(int fd, int cmd, short type, off_t start, off_t len) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, cmd, &fl);
}

static int fd;
static int to_child[2], to_parent[2];

/* The child answers F_GETLK questions asked through the pipe. */
static void child_getlk(void) {
	struct flock fl;
	close(to_child[1]);
	while (read(to_child[0], &fl, sizeof fl) == sizeof fl) {
		if (fcntl(fd, F_GETLK, &fl) < 0)
			fl.l_type = -1;
		write(to_parent[1], &fl, sizeof fl);
	}
	_exit(0);
}

static void ask(const char *name, short type, off_t start, off_t len) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	write(to_child[1], &fl, sizeof fl);
	read(to_parent[0], &fl, sizeof fl);
	SHOW(name, "type %s start %ld len %ld mine %d",
	     fl.l_type == F_UNLCK ? "unlck" : fl.l_type == F_RDLCK ? "rdlck" : "wrlck", (long)fl.l_start,
	     (long)fl.l_len, fl.l_type != F_UNLCK && fl.l_pid == getpid());
}

int main(void) {
	fd = open("lo", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(fd, "0123456789abcdefghijklmnopqrstuvwxyz", 36);
	pipe(to_child);
	pipe(to_parent);
	pid_t pid = fork();
	if (pid == 0)
		child_getlk();

	/* A write lock, then a read lock before it: the read lock is first. */
	RET("write.10.5", lk(fd, F_SETLK, F_WRLCK, 10, 5));
	RET("read.1.5", lk(fd, F_SETLK, F_RDLCK, 1, 5));
	ask("getlk.all", F_WRLCK, 0, 0);
	ask("getlk.from.6", F_WRLCK, 6, 0);
	ask("getlk.from.15", F_WRLCK, 15, 0);
	ask("getlk.read.all", F_RDLCK, 0, 0);
	/* Adjacent read locks merge; a write lock in a read lock splits it. */
	RET("read.6.4", lk(fd, F_SETLK, F_RDLCK, 6, 4));
	ask("getlk.merged", F_WRLCK, 0, 0);
	RET("write.3.2", lk(fd, F_SETLK, F_WRLCK, 3, 2));
	ask("getlk.split.first", F_WRLCK, 0, 0);
	ask("getlk.split.write", F_RDLCK, 0, 0);
	ask("getlk.split.after", F_WRLCK, 5, 0);
	/* A write lock that reaches the write lock at 10 merges with it. */
	RET("write.5.5", lk(fd, F_SETLK, F_WRLCK, 5, 5));
	ask("getlk.write.merged", F_RDLCK, 4, 0);
	RET("write.to.end", lk(fd, F_SETLK, F_WRLCK, 20, 0));
	ask("getlk.to.end", F_RDLCK, 16, 0);
	RET("unlock.all", lk(fd, F_SETLK, F_UNLCK, 0, 0));
	ask("getlk.none", F_WRLCK, 0, 0);
	close(to_child[1]);
	waitpid(pid, NULL, 0);

	/* Deadlock: the parent holds 0, the child holds 1 and waits for 0;
	 * the parent's wait for 1 would close the loop. */
	int ready[2];
	pipe(ready);
	RET("hold.0", lk(fd, F_SETLK, F_WRLCK, 0, 1));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		lk(fd, F_SETLK, F_WRLCK, 1, 1);
		write(ready[1], "x", 1);
		_exit(lk(fd, F_SETLKW, F_WRLCK, 0, 1) == 0 ? 0 : errno);
	}
	char c;
	read(ready[0], &c, 1);
	struct timespec d = {0, 100 * 1000000};
	nanosleep(&d, NULL);
	RET("setlkw.deadlock", lk(fd, F_SETLKW, F_WRLCK, 1, 1));
	RET("setlk.busy", lk(fd, F_SETLK, F_WRLCK, 1, 1));
	/* OFD locks have no deadlock check: a non-blocking try only. */
	RET("ofd.getlk.pid", ({
		    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1};
		    fcntl(fd, F_OFD_GETLK, &fl) == 0 ? fl.l_pid == pid : -2;
	    }));
	RET("unlock.0", lk(fd, F_SETLK, F_UNLCK, 0, 1));
	int status;
	waitpid(pid, &status, 0);
	SHOW("child.got.lock", "%d", WEXITSTATUS(status));

	RET("setlk.bad.pointer.stdout", fcntl(1, F_SETLK, BAD));
	RET("getlk.bad.pointer", fcntl(fd, F_GETLK, BAD));
	RET("setlk.bad.pointer.pipe", fcntl(ready[0], F_SETLK, BAD));
	return 0;
}
