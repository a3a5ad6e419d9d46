/* kcmp: which kernel objects two processes (or threads) share, after
 * fork, clone with each sharing flag, dup, and epoll watches; the
 * errors in Linux's order. Linux orders different objects by obfuscated
 * addresses, so an inequality prints as "differ" (after checking that the
 * order is antisymmetric). CLONE_FS shares the working directory and the
 * umask. qemu-user turns clone's sharing flags down, so Linux itself is
 * the oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long kcmp(pid_t a, pid_t b, int type, unsigned long x, unsigned long y)
{
	return syscall(SYS_kcmp, a, b, type, x, y);
}

/* cmp prints whether the objects are the same: "same", "differ", or the
 * error; an order that is not antisymmetric prints "bad order". */
static void cmp(const char *name, pid_t a, pid_t b, int type, unsigned long x, unsigned long y)
{
	errno = 0;
	long r = kcmp(a, b, type, x, y);
	long back = type == KCMP_EPOLL_TFD ? r : kcmp(b, a, type, y, x);
	if (r < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else if (r == 0 && back == 0)
		SHOW(name, "%s", "same");
	else if ((r == 1 && back == 2) || (r == 2 && back == 1) || (r > 0 && type == KCMP_EPOLL_TFD))
		SHOW(name, "%s", "differ");
	else
		SHOW(name, "bad order %ld %ld", r, back);
}

static int go[2], done[2];
static int fd1;
static int pause_child(void *arg)
{
	(void)arg;
	if (arg)
		chdir("/tmp"), umask(077);
	write(go[1], "x", 1);
	char c;
	read(done[0], &c, 1);
	_exit(0);
}

static char stack[64 * 1024] __attribute__((aligned(16)));

/* share runs a child cloned with flags that waits; the caller compares,
 * then release lets it go. */
static pid_t share(int flags, void *arg)
{
	pid_t pid = clone(pause_child, stack + sizeof stack, flags | SIGCHLD, arg);
	char c;
	read(go[0], &c, 1);
	return pid;
}

static void release(pid_t pid)
{
	write(done[1], "x", 1);
	waitpid(pid, NULL, 0);
}

static pid_t thread_tid;
static void *thread_main(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	write(go[1], "x", 1);
	char c;
	read(done[0], &c, 1);
	return NULL;
}

int main(void)
{
	pipe(go);
	pipe(done);
	pid_t me = getpid();
	mkdir("/tmp", 0777);
	fd1 = open("/kcmp.a", O_RDWR | O_CREAT, 0644);
	int fd2 = dup(fd1);
	int fd3 = open("/kcmp.a", O_RDWR);
	cmp("file.same.fd", me, me, KCMP_FILE, fd1, fd1);
	cmp("file.dup", me, me, KCMP_FILE, fd1, fd2);
	cmp("file.reopened", me, me, KCMP_FILE, fd1, fd3);
	cmp("file.bad.fd", me, me, KCMP_FILE, fd1, 99);
	cmp("file.bad.first.fd", me, me, KCMP_FILE, 99, fd1);

	pid_t child = share(0, NULL);
	cmp("fork.file", me, child, KCMP_FILE, fd1, fd1);
	cmp("fork.file.dup", me, child, KCMP_FILE, fd1, fd2);
	cmp("fork.file.reopened", me, child, KCMP_FILE, fd1, fd3);
	cmp("fork.vm", me, child, KCMP_VM, 0, 0);
	cmp("fork.files", me, child, KCMP_FILES, 0, 0);
	cmp("fork.fs", me, child, KCMP_FS, 0, 0);
	cmp("fork.sighand", me, child, KCMP_SIGHAND, 0, 0);
	cmp("fork.io", me, child, KCMP_IO, 0, 0);
	cmp("fork.sysvsem", me, child, KCMP_SYSVSEM, 0, 0);
	release(child);

	child = share(CLONE_VM, NULL);
	cmp("clone_vm.vm", me, child, KCMP_VM, 0, 0);
	cmp("clone_vm.files", me, child, KCMP_FILES, 0, 0);
	release(child);
	child = share(CLONE_FILES, NULL);
	cmp("clone_files.files", me, child, KCMP_FILES, 0, 0);
	cmp("clone_files.vm", me, child, KCMP_VM, 0, 0);
	release(child);
	child = share(CLONE_FS, "chdir");
	cmp("clone_fs.fs", me, child, KCMP_FS, 0, 0);
	char cwd[64];
	SHOW("clone_fs.cwd", "%s", getcwd(cwd, sizeof cwd));
	SHOW("clone_fs.umask", "%03o", umask(022));
	chdir("/");
	release(child);
	child = share(0, "chdir");
	SHOW("fork.cwd", "%s", getcwd(cwd, sizeof cwd));
	SHOW("fork.umask", "%03o", umask(022));
	release(child);
	child = share(CLONE_IO, NULL);
	cmp("clone_io.io", me, child, KCMP_IO, 0, 0);
	release(child);

	pthread_t th;
	pthread_create(&th, NULL, thread_main, NULL);
	char c;
	read(go[0], &c, 1);
	cmp("thread.vm", me, thread_tid, KCMP_VM, 0, 0);
	cmp("thread.files", me, thread_tid, KCMP_FILES, 0, 0);
	cmp("thread.fs", me, thread_tid, KCMP_FS, 0, 0);
	cmp("thread.sighand", me, thread_tid, KCMP_SIGHAND, 0, 0);
	cmp("thread.file", me, thread_tid, KCMP_FILE, fd1, fd2);
	write(done[1], "x", 1);
	pthread_join(th, NULL);

	/* A SEM_UNDO operation gives the process an undo list of its own. */
	int sem = semget(IPC_PRIVATE, 1, 0600);
	struct sembuf up = {0, 1, SEM_UNDO};
	semop(sem, &up, 1);
	child = share(0, NULL);
	cmp("undo.fork.sysvsem", me, child, KCMP_SYSVSEM, 0, 0);
	release(child);
	semctl(sem, 0, IPC_RMID);

	int ep = epoll_create1(0), p[2];
	pipe(p);
	int pdup = dup(p[0]);
	struct epoll_event ev = {.events = EPOLLIN};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	struct kcmp_epoll_slot slot = {ep, p[0], 0};
	cmp("epoll.tfd", me, me, KCMP_EPOLL_TFD, pdup, (unsigned long)&slot);
	cmp("epoll.tfd.other", me, me, KCMP_EPOLL_TFD, p[1], (unsigned long)&slot);
	child = share(0, NULL);
	cmp("epoll.tfd.fork", child, me, KCMP_EPOLL_TFD, p[0], (unsigned long)&slot);
	release(child);
	slot.toff = 1;
	cmp("epoll.tfd.toff", me, me, KCMP_EPOLL_TFD, p[0], (unsigned long)&slot);
	slot.toff = 0, slot.tfd = p[1];
	cmp("epoll.tfd.unwatched", me, me, KCMP_EPOLL_TFD, p[0], (unsigned long)&slot);
	slot.efd = fd2;
	cmp("epoll.tfd.not.epoll", me, me, KCMP_EPOLL_TFD, p[0], (unsigned long)&slot);
	slot.efd = 99;
	cmp("epoll.tfd.bad.efd", me, me, KCMP_EPOLL_TFD, p[0], (unsigned long)&slot);
	cmp("epoll.tfd.bad.slot", me, me, KCMP_EPOLL_TFD, p[0], (unsigned long)BAD);
	cmp("epoll.tfd.bad.fd.bad.slot", me, me, KCMP_EPOLL_TFD, 99, (unsigned long)BAD);
	slot.efd = ep;
	cmp("epoll.tfd.bad.fd", me, me, KCMP_EPOLL_TFD, 99, (unsigned long)&slot);

	cmp("type.8", me, me, 8, 0, 0);
	cmp("type.-1", me, me, -1, 0, 0);
	cmp("type.bad.pid", me, 99999, 8, 0, 0);
	cmp("pid.bad.first", 99999, me, KCMP_VM, 0, 0);
	cmp("pid.bad.second", me, 99999, KCMP_VM, 0, 0);

	if (fork() == 0) {
		setuid(65534);
		cmp("other.user", me, getpid(), KCMP_VM, 0, 0);
		cmp("other.user.type.8", me, getpid(), 8, 0, 0);
		cmp("other.user.self", getpid(), getpid(), KCMP_VM, 0, 0);
		_exit(0);
	}
	wait(NULL);
	return 0;
}
