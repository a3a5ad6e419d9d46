/* /proc/sys/kernel/ns_last_pid: the last pid given out; root writes it
 * to choose the next one (a pid in use is skipped), a value out of range
 * or not a number is EINVAL. An open /proc/PID names its process, not
 * the pid: once another process has the pid, pidfd_send_signal through
 * it is ESRCH (LTP's pidfd_send_signal03). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void put(const char *name, const char *text) {
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	long n = write(fd, text, strlen(text));
	RET(name, n == (long)strlen(text) ? 0 : n);
	close(fd);
}

static int last(void) {
	char buf[32] = {0};
	int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
	read(fd, buf, sizeof buf - 1);
	close(fd);
	return atoi(buf);
}

static pid_t child(void) {
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	pid_t pid = child();
	SHOW("reads_last", "%d", last() == pid);
	put("set.5000", "5000");
	SHOW("after.5000", "%d", last());
	SHOW("next", "%d", child());
	SHOW("then", "%d", child());
	put("set.0", "0");
	SHOW("skips_init", "%d", child() > 1); /* Linux skips its kernel threads too */
	put("set.negative", "-1");
	put("set.huge", "4194304000");
	put("set.garbage", "pid");
	char buf[16];
	snprintf(buf, sizeof buf, "%d", getpid() - 1);
	put("set.before_self", buf);
	SHOW("skips_self", "%d", child() != getpid());

	int p[2];
	pipe(p);
	pid_t old = fork();
	if (old == 0) {
		char c;
		read(p[0], &c, 1);
		_exit(0);
	}
	char dir[32];
	snprintf(dir, sizeof dir, "/proc/%d", old);
	int procfd = open(dir, O_DIRECTORY | O_CLOEXEC);
	RET("signal.live", syscall(SYS_pidfd_send_signal, procfd, 0, NULL, 0));
	write(p[1], "x", 1);
	waitpid(old, NULL, 0);
	RET("signal.reaped", syscall(SYS_pidfd_send_signal, procfd, 0, NULL, 0));
	snprintf(buf, sizeof buf, "%d", old - 1);
	put("set.reuse", buf);
	pid_t again = fork();
	if (again == 0) {
		pause();
		_exit(0);
	}
	SHOW("reused", "%d", again == old);
	RET("signal.reused", syscall(SYS_pidfd_send_signal, procfd, SIGKILL, NULL, 0));
	int newfd = open(dir, O_DIRECTORY | O_CLOEXEC);
	RET("signal.new", syscall(SYS_pidfd_send_signal, newfd, SIGKILL, NULL, 0));
	waitpid(again, NULL, 0);
	return 0;
}
