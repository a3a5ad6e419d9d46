/* UTS and IPC namespaces: /proc/PID/ns/uts and ipc (links named by kind
 * and inode number, leading to a read-only file of that inode number),
 * the ioctls of those files, clone and unshare with CLONE_NEWUTS and
 * CLONE_NEWIPC, setns back into the parent's, an IPC namespace kept by an
 * open file after its last process left, and the errors of setns and
 * unshare (LTP's setns01, setns02, ioctl_ns02, ioctl_ns03). */
#include "../../conform/conform.h"
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define NS_GET_PARENT 0xb702
#define NS_GET_NSTYPE 0xb703
#define NS_GET_OWNER_UID 0xb704

static void show_link(const char *name, const char *path) {
	char buf[64];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	if (n < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	buf[n] = 0;
	SHOW(name, "%s", buf);
}

static ino_t ino_of(const char *path) {
	struct stat st;
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static char host[65];
static int parent_uts, parent_ipc;
static const key_t key = 0x5eed;

static char stack[256 * 1024] __attribute__((aligned(16)));

/* in_new_uts runs in a child cloned with CLONE_NEWUTS. */
static int in_new_uts(void *arg) {
	(void)arg;
	struct utsname u;
	uname(&u);
	SHOW("child.uts.inherited", "%d", strcmp(u.nodename, host) == 0);
	RET("child.sethostname", sethostname("inner", 5));
	uname(&u);
	SHOW("child.uts.nodename", "%s", u.nodename);
	SHOW("child.uts.ns.differs", "%d", ino_of("/proc/self/ns/uts") != ino_of("/proc/1/ns/uts"));
	SHOW("child.ipc.ns.same", "%d", ino_of("/proc/self/ns/ipc") == ino_of("/proc/1/ns/ipc"));
	RET("child.setns.wrong.type", syscall(SYS_setns, parent_uts, CLONE_NEWIPC));
	RET("child.setns.uts", syscall(SYS_setns, parent_uts, CLONE_NEWUTS));
	uname(&u);
	SHOW("child.uts.back", "%d", strcmp(u.nodename, host) == 0);
	return 0;
}

/* in_new_ipc runs in a child cloned with CLONE_NEWIPC. */
static int in_new_ipc(void *arg) {
	(void)arg;
	RET("child.shmget.parent.key", shmget(key, 0, 0));
	int q = msgget(key, IPC_CREAT | 0600);
	SHOW("child.msgget.own", "%d", q >= 0);
	RET("child.setns.ipc", syscall(SYS_setns, parent_ipc, 0));
	int id = shmget(key, 0, 0);
	SHOW("child.shmget.after.setns", "%d", id >= 0);
	RET("child.msgget.after.setns", msgget(key, 0));
	return 0;
}

static void run(const char *name, int (*fn)(void *), int flags) {
	pid_t pid = clone(fn, stack + sizeof stack, flags | SIGCHLD, NULL);
	if (pid < 0) {
		SHOW(name, "clone -1 %s", strerrorname_np(errno));
		return;
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW(name, "exit %d", WEXITSTATUS(status));
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	struct utsname u;
	uname(&u);
	strcpy(host, u.nodename);

	show_link("uts.link", "/proc/self/ns/uts");
	show_link("ipc.link", "/proc/self/ns/ipc");
	struct stat st;
	RET("uts.lstat", lstat("/proc/self/ns/uts", &st));
	SHOW("uts.lstat.islink", "%d", S_ISLNK(st.st_mode));
	RET("uts.stat", stat("/proc/self/ns/uts", &st));
	SHOW("uts.stat.mode", "%o", st.st_mode);
	SHOW("uts.stat.ino", "%lu", (unsigned long)st.st_ino);
	RET("uts.below", open("/proc/self/ns/uts/x", O_RDONLY));

	parent_uts = open("/proc/self/ns/uts", O_RDONLY);
	parent_ipc = open("/proc/self/ns/ipc", O_RDONLY);
	SHOW("open", "%d", parent_uts >= 0 && parent_ipc >= 0);
	fstat(parent_uts, &st);
	SHOW("uts.fstat.ino", "%lu", (unsigned long)st.st_ino);
	RET("ioctl.nstype.uts", ioctl(parent_uts, NS_GET_NSTYPE));
	RET("ioctl.nstype.ipc", ioctl(parent_ipc, NS_GET_NSTYPE));
	RET("ioctl.parent.uts", ioctl(parent_uts, NS_GET_PARENT));
	uid_t uid;
	RET("ioctl.owner_uid.uts", ioctl(parent_uts, NS_GET_OWNER_UID, &uid));
	RET("ioctl.other", ioctl(parent_uts, TCGETS, &st));

	/* setns's errors, in Linux's order. */
	RET("setns.badfd", syscall(SYS_setns, -1, CLONE_NEWUTS));
	int other[2];
	pipe(other);
	RET("setns.other.file", syscall(SYS_setns, other[0], CLONE_NEWUTS));
	RET("setns.type", syscall(SYS_setns, parent_uts, -1));
	RET("setns.mismatch", syscall(SYS_setns, parent_uts, CLONE_NEWIPC));
	RET("setns.own", syscall(SYS_setns, parent_uts, CLONE_NEWUTS));
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		RET("setns.unprivileged", syscall(SYS_setns, parent_uts, CLONE_NEWUTS));
		RET("unshare.unprivileged", unshare(CLONE_NEWUTS));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	int path = open("/proc/self/ns/uts", O_PATH);
	RET("setns.opath", syscall(SYS_setns, path, CLONE_NEWUTS));
	RET("clone.newipc.sysvsem", clone(in_new_ipc, stack + sizeof stack, CLONE_NEWIPC | CLONE_SYSVSEM | SIGCHLD, NULL));

	int shm = shmget(key, 4096, IPC_CREAT | 0600);
	SHOW("shmget", "%d", shm >= 0);
	run("clone.newuts", in_new_uts, CLONE_NEWUTS);
	uname(&u);
	SHOW("parent.uts.unchanged", "%d", strcmp(u.nodename, host) == 0);
	run("clone.newipc", in_new_ipc, CLONE_NEWIPC);
	RET("parent.msgget", msgget(key, 0));

	/* An IPC namespace outlives its last process while a file is open
	 * on it, and goes with that file. */
	int pipefd[2], ready[2];
	pipe(pipefd);
	pipe(ready);
	pid = fork();
	if (pid == 0) {
		unshare(CLONE_NEWIPC);
		msgget(key, IPC_CREAT | 0600);
		write(ready[1], "x", 1);
		char c;
		read(pipefd[0], &c, 1);
		_exit(0);
	}
	char c, nspath[64];
	read(ready[0], &c, 1);
	snprintf(nspath, sizeof nspath, "/proc/%d/ns/ipc", pid);
	int kept = open(nspath, O_RDONLY);
	write(pipefd[1], "x", 1);
	waitpid(pid, NULL, 0);
	pid = fork();
	if (pid == 0) {
		RET("kept.setns", syscall(SYS_setns, kept, CLONE_NEWIPC));
		SHOW("kept.msgget", "%d", msgget(key, 0) >= 0);
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* unshare moves the caller itself. */
	ino_t before = ino_of("/proc/self/ns/uts");
	RET("unshare.newuts", unshare(CLONE_NEWUTS));
	SHOW("unshare.uts.differs", "%d", ino_of("/proc/self/ns/uts") != before);
	RET("unshare.sethostname", sethostname("moved", 5));
	RET("setns.back", syscall(SYS_setns, parent_uts, 0));
	uname(&u);
	SHOW("setns.back.host", "%d", strcmp(u.nodename, host) == 0);
	RET("unshare.newipc", unshare(CLONE_NEWIPC));
	RET("unshare.newipc.shmget", shmget(key, 0, 0));
	RET("setns.back.ipc", syscall(SYS_setns, parent_ipc, CLONE_NEWIPC));
	SHOW("setns.back.ipc.shmget", "%d", shmget(key, 0, 0) == shm);
	shmctl(shm, IPC_RMID, NULL);
	return 0;
}
