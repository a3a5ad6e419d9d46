/* Advisory locks: fcntl record locks between processes (conflicts, F_GETLK,
 * splitting, release on close and exit, F_SETLKW waiting), OFD locks, and
 * flock. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>

static int lk(int fd, int cmd, short type, off_t start, off_t len) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, cmd, &fl);
}

static const char *getlk(int fd, off_t start, off_t len, pid_t owner) {
	static char out[96];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return strerrorname_np(errno);
	snprintf(out, sizeof out, "type %s start %ld len %ld by-owner %d",
		 fl.l_type == F_UNLCK ? "unlck" : fl.l_type == F_RDLCK ? "rdlck" : "wrlck", (long)fl.l_start,
		 (long)fl.l_len, fl.l_type != F_UNLCK && fl.l_pid == owner);
	return out;
}

/* in_child runs f in a child process and returns its exit status. */
static int in_child(int (*f)(int), int fd) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(f(fd));
	int status;
	waitpid(pid, &status, 0);
	return WEXITSTATUS(status);
}

static int try_write_lock(int fd) { return lk(fd, F_SETLK, F_WRLCK, 0, 10) < 0 ? errno : 0; }
static int try_read_lock_20(int fd) { return lk(fd, F_SETLK, F_RDLCK, 20, 5) < 0 ? errno : 0; }
static int try_flock_nb(int fd) {
	int fd2 = open("l", O_RDWR);
	return flock(fd2, LOCK_EX | LOCK_NB) < 0 ? errno : 0;
}
static int hold_then_exit(int fd) {
	lk(fd, F_SETLK, F_WRLCK, 0, 0);
	struct timespec d = {0, 100 * 1000000};
	nanosleep(&d, NULL);
	return 0;
}

int main(void) {
	int fd = open("l", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(fd, "0123456789abcdefghijklmnopqrstuvwxyz", 36);
	pid_t me = getpid();
	RET("setlk.write", lk(fd, F_SETLK, F_WRLCK, 0, 10));
	RET("setlk.read.other.range", lk(fd, F_SETLK, F_RDLCK, 20, 10));
	SHOW("getlk.self", "%s", getlk(fd, 0, 10, me));
	SHOW("child.write.conflict", "%s", strerrorname_np(in_child(try_write_lock, fd)));
	SHOW("child.read.shared", "%d", in_child(try_read_lock_20, fd));
	RET("unlock.middle", lk(fd, F_SETLK, F_UNLCK, 3, 4));
	pid_t pid = fork();
	if (pid == 0) {
		SHOW("child.getlk.split", "%s", getlk(fd, 0, 0, getppid()));
		SHOW("child.getlk.hole", "%s", getlk(fd, 3, 4, getppid()));
		SHOW("child.getlk.after", "%s", getlk(fd, 8, 2, getppid()));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	RET("setlk.badtype", lk(fd, F_SETLK, 7, 0, 1));
	RET("setlk.badwhence", fcntl(fd, F_SETLK, &(struct flock){.l_type = F_RDLCK, .l_whence = 9}));
	RET("setlk.negative.start", lk(fd, F_SETLK, F_RDLCK, -5, 1));
	RET("setlk.negative.len", lk(fd, F_SETLK, F_RDLCK, 10, -5));
	int ro = open("l", O_RDONLY);
	RET("setlk.write.on.readonly", lk(ro, F_SETLK, F_WRLCK, 0, 1));
	/* Closing any descriptor of the file drops the process's locks. */
	RET("close.other.fd", close(ro));
	SHOW("child.write.after.close", "%d", in_child(try_write_lock, fd));

	/* A child holds a lock; F_SETLKW waits until it exits. */
	pid = fork();
	if (pid == 0)
		_exit(hold_then_exit(fd));
	struct timespec d = {0, 30 * 1000000};
	nanosleep(&d, NULL);
	RET("setlkw.waits", lk(fd, F_SETLKW, F_WRLCK, 0, 0));
	waitpid(pid, NULL, 0);
	RET("unlock.all", lk(fd, F_SETLK, F_UNLCK, 0, 0));

	/* OFD locks belong to the description: a second open conflicts. */
	int a = open("l", O_RDWR), b = open("l", O_RDWR);
	RET("ofd.setlk", lk(a, F_OFD_SETLK, F_WRLCK, 0, 1));
	RET("ofd.other.description", lk(b, F_OFD_SETLK, F_WRLCK, 0, 1));
	RET("ofd.same.description", lk(a, F_OFD_SETLK, F_RDLCK, 0, 1));
	close(a);
	RET("ofd.after.close", lk(b, F_OFD_SETLK, F_WRLCK, 0, 1));
	close(b);

	/* flock */
	RET("flock.ex", flock(fd, LOCK_EX));
	SHOW("child.flock.nb", "%s", strerrorname_np(in_child(try_flock_nb, fd)));
	RET("flock.un", flock(fd, LOCK_UN));
	SHOW("child.flock.after.un", "%d", in_child(try_flock_nb, fd));
	RET("flock.sh", flock(fd, LOCK_SH));
	RET("flock.bad", flock(fd, 0));
	RET("flock.badfd", flock(99, LOCK_EX));
	return 0;
}
