/* PID namespaces: clone(CLONE_NEWPID) makes a child that is pid 1 of its
 * namespace with no parent there, whose children count from 2; signals
 * from inside to that init without a handler are dropped, SIGKILL from
 * above ends it; its death kills the others of its namespace before its
 * parent hears of it; unshare(CLONE_NEWPID) and setns send the caller's
 * children into a namespace; /proc/PID/ns/pid, pid_for_children and user,
 * and the nsfs ioctls on them; the nesting limit (LTP's ioctl_ns01,
 * ioctl_ns04, ioctl_ns05, unshare05, clone301). Only relations are
 * printed: the global pids differ between kernels. */
#include "../../conform/conform.h"
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NS_GET_USERNS 0xb701
#define NS_GET_PARENT 0xb702
#define NS_GET_NSTYPE 0xb703
#define NS_GET_OWNER_UID 0xb704

static ino_t ino_of(const char *path) {
	struct stat st;
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static ino_t fd_ino(int fd) {
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static char stack[256 * 1024] __attribute__((aligned(16)));
static int pipefd[2];

static int spawn(int (*fn)(void *), int flags) {
	fflush(stdout);
	return clone(fn, stack + sizeof stack, flags | SIGCHLD, NULL);
}

static void wait_show(const char *name, pid_t pid) {
	int st;
	pid_t w = waitpid(pid, &st, 0);
	if (w != pid)
		SHOW(name, "waitpid -1 %s", strerrorname_np(errno));
	else if (WIFEXITED(st))
		SHOW(name, "exit %d", WEXITSTATUS(st));
	else
		SHOW(name, "signal %d", WTERMSIG(st));
}

/* init_fn is the first process of a new namespace. */
static int init_fn(void *arg) {
	(void)arg;
	SHOW("init.getpid", "%d", getpid());
	SHOW("init.getppid", "%d", getppid());
	SHOW("init.getpgrp", "%d", getpgrp());
	SHOW("init.ns.differs", "%d", ino_of("/proc/self/ns/pid") != ino_of("/proc/1/ns/pid"));
	SHOW("init.for_children.same", "%d", ino_of("/proc/self/ns/pid_for_children") == ino_of("/proc/self/ns/pid"));
	int fd = open("/proc/self/ns/pid", O_RDONLY);
	RET("init.ns_get_parent", ioctl(fd, NS_GET_PARENT));
	close(fd);
	/* /proc is the root namespace's: its 1 is the test, above. */
	fd = open("/proc/1/ns/pid", O_RDONLY);
	RET("init.setns.ancestor", syscall(SYS_setns, fd, CLONE_NEWPID));
	close(fd);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		SHOW("child.getpid", "%d", getpid());
		SHOW("child.getppid", "%d", getppid());
		RET("child.kill.init.term", kill(1, SIGTERM));
		RET("child.kill.init.kill", kill(1, SIGKILL));
		_exit(7);
	}
	siginfo_t si = {0};
	RET("init.waitid", waitid(P_PID, c, &si, WEXITED));
	SHOW("init.fork", "%d", c);
	SHOW("init.waitid.si_pid", "%d", si.si_pid);
	SHOW("init.waitid.status", "%d", si.si_status);
	SHOW("init.alive", "%d", 1);

	RET("init.unshare", unshare(CLONE_NEWPID));
	RET("init.unshare.again", unshare(CLONE_NEWPID));
	RET("init.clone.newpid.after.unshare", spawn(init_fn, CLONE_NEWPID));
	char buf[64];
	RET("init.for_children.before.fork", readlink("/proc/self/ns/pid_for_children", buf, sizeof buf));
	RET("init.thread.after.unshare", spawn(init_fn, CLONE_VM | CLONE_SIGHAND | CLONE_THREAD));
	fflush(stdout);
	c = fork();
	if (c == 0) {
		SHOW("nested.getpid", "%d", getpid());
		SHOW("nested.getppid", "%d", getppid());
		_exit(3);
	}
	wait_show("init.nested.wait", c);
	SHOW("init.nested.fork", "%d", c);
	SHOW("init.for_children.after.fork", "%d",
	     ino_of("/proc/self/ns/pid_for_children") != ino_of("/proc/self/ns/pid"));
	return 5;
}

/* dying_init forks a child that waits forever, holding the pipe, and
 * exits: its namespace's death takes the child. */
static int dying_init(void *arg) {
	(void)arg;
	if (fork() == 0) {
		for (;;)
			pause();
	}
	close(pipefd[1]);
	return 0;
}

/* waiting_init waits for signals it has no handler for. */
static int waiting_init(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* depth nests namespaces, each the child of the last's init, until a new
 * one fails; each init exits with its child's status. */
static void depth(void) {
	for (int level = 1;; level++) {
		fflush(stdout);
		long c = syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
		if (c < 0) {
			SHOW("depth.failed.at", "%d", level);
			SHOW("depth.errno", "%s", strerrorname_np(errno));
			return;
		}
		if (c > 0) {
			int st;
			waitpid(c, &st, 0);
			_exit(WEXITSTATUS(st));
		}
	}
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	/* The test is the first process, the kernel's init: it has no
	 * siblings to make. */
	RET("clone.newpid.parent", spawn(init_fn, CLONE_NEWPID | CLONE_PARENT));
	RET("clone.newpid.thread", spawn(init_fn, CLONE_NEWPID | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD));

	pid_t pid = spawn(waiting_init, CLONE_NEWPID);
	SHOW("parent.child.pid.global", "%d", pid > 1);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/pid", pid);
	int own = open("/proc/self/ns/pid", O_RDONLY), child = open(path, O_RDONLY);
	SHOW("parent.child.ns.differs", "%d", fd_ino(own) != fd_ino(child));
	RET("parent.child.nstype", ioctl(child, NS_GET_NSTYPE));
	int parent = ioctl(child, NS_GET_PARENT);
	SHOW("parent.ns_get_parent.is.own", "%d", parent >= 0 && fd_ino(parent) == fd_ino(own));
	SHOW("parent.ns_get_parent.cloexec", "%d", fcntl(parent, F_GETFD));
	RET("parent.own.ns_get_parent", ioctl(own, NS_GET_PARENT));
	kill(pid, SIGKILL);
	wait_show("parent.wait.waiting", pid);
	close(parent);
	close(child);
	pid = spawn(init_fn, CLONE_NEWPID);
	wait_show("parent.wait.init", pid);

	int user = open("/proc/self/ns/user", O_RDONLY);
	SHOW("user.link.ok", "%d", user >= 0);
	RET("user.nstype", ioctl(user, NS_GET_NSTYPE));
	RET("user.ns_get_userns", ioctl(user, NS_GET_USERNS));
	RET("user.ns_get_parent", ioctl(user, NS_GET_PARENT));
	uid_t uid = 99;
	RET("user.owner_uid", ioctl(user, NS_GET_OWNER_UID, &uid));
	SHOW("user.owner_uid.value", "%u", uid);
	int owner = ioctl(own, NS_GET_USERNS);
	SHOW("pid.ns_get_userns.is.user", "%d", owner >= 0 && fd_ino(owner) == fd_ino(user));
	RET("pid.owner_uid", ioctl(own, NS_GET_OWNER_UID, &uid));
	RET("user.setns", syscall(SYS_setns, user, CLONE_NEWUSER));
	close(owner);
	close(user);

	/* The death of a namespace's init kills the rest first. */
	pipe(pipefd);
	pid = spawn(dying_init, CLONE_NEWPID);
	close(pipefd[1]);
	wait_show("dying.wait.init", pid);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	char b;
	RET("dying.child.gone", read(pipefd[0], &b, 1));
	close(pipefd[0]);

	/* Signals from above: SIGTERM without a handler is dropped, SIGKILL
	 * is not. */
	pid = spawn(waiting_init, CLONE_NEWPID);
	RET("above.kill.term", kill(pid, SIGTERM));
	usleep(100000);
	RET("above.alive", waitpid(pid, NULL, WNOHANG));
	RET("above.kill.kill", kill(pid, SIGKILL));
	wait_show("above.wait", pid);

	/* setns into a child's namespace sends the next child there. */
	pid = spawn(waiting_init, CLONE_NEWPID);
	snprintf(path, sizeof path, "/proc/%d/ns/pid", pid);
	child = open(path, O_RDONLY);
	RET("setns.child.uts.type", syscall(SYS_setns, child, CLONE_NEWUTS));
	RET("setns.child", syscall(SYS_setns, child, CLONE_NEWPID));
	SHOW("setns.for_children.is.child", "%d", ino_of("/proc/self/ns/pid_for_children") == fd_ino(child));
	SHOW("setns.own.unchanged", "%d", ino_of("/proc/self/ns/pid") == fd_ino(own));
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		SHOW("setns.fork.getpid", "%d", getpid());
		SHOW("setns.fork.getppid", "%d", getppid());
		_exit(0);
	}
	wait_show("setns.fork.wait", c);
	RET("setns.back", syscall(SYS_setns, own, CLONE_NEWPID));
	SHOW("setns.back.same", "%d", ino_of("/proc/self/ns/pid_for_children") == fd_ino(own));
	kill(pid, SIGKILL);
	wait_show("setns.wait.init", pid);
	close(child);
	close(own);

	int st = run_child(depth);
	SHOW("depth.status", "%d", WEXITSTATUS(st));
	return 0;
}
