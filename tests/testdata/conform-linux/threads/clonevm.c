/* What qemu-riscv64 cannot show (it runs vfork as fork and refuses
 * CLONE_VM without CLONE_THREAD): a process sharing memory (CLONE_VM), the
 * fd table (CLONE_FILES), vfork's borrowed memory and suspended parent, and
 * set_robust_list/get_robust_list, which qemu-riscv64 answers with ENOSYS. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define STACK (64 * 1024)

static volatile int shared;
static volatile int child_fd = -1;

static int set_shared(void *arg) {
	shared = (int)(long)arg;
	return 7;
}

static int dup_stdout(void *arg) {
	child_fd = fcntl(1, F_DUPFD, 0);
	return 0;
}

static int close_fd(void *arg) {
	return close((int)(long)arg) == 0 ? 0 : errno;
}

static void status(const char *name, pid_t pid) {
	int st = 0;
	pid_t r = waitpid(pid, &st, __WALL);
	SHOW(name, "%s exited=%d code=%d", r == pid ? "reaped" : "lost", WIFEXITED(st), WEXITSTATUS(st));
}

int main(void) {
	char *stack = malloc(STACK);
	char *top = stack + STACK;

	/* CLONE_VM without CLONE_THREAD: another process, the same memory. */
	pid_t pid = clone(set_shared, top, CLONE_VM | SIGCHLD, (void *)42L);
	SHOW("clone.vm.is.another.process", "%d", pid > 0 && pid != getpid());
	status("clone.vm.child", pid);
	SHOW("clone.vm.write.seen", "%d", shared);

	/* CLONE_FILES: a descriptor the child opens is the parent's too, and one
	 * it closes is closed for both; without it, the child has a copy. */
	pid = clone(dup_stdout, top, CLONE_VM | CLONE_FILES | SIGCHLD, NULL);
	status("clone.files.child", pid);
	SHOW("clone.files.new.fd.shared", "%d", child_fd >= 0 && fcntl(child_fd, F_GETFD) == 0);
	pid = clone(close_fd, top, CLONE_VM | CLONE_FILES | SIGCHLD, (void *)(long)child_fd);
	status("clone.files.close.child", pid);
	errno = 0;
	SHOW("clone.files.closed.for.both", "%d %s", fcntl(child_fd, F_GETFD), strerrorname_np(errno));
	pid = clone(dup_stdout, top, CLONE_VM | SIGCHLD, NULL);
	status("clone.nofiles.child", pid);
	errno = 0;
	SHOW("clone.nofiles.fd.not.shared", "%d %s", fcntl(child_fd, F_GETFD), strerrorname_np(errno));
	int fd = fcntl(1, F_DUPFD, 0);
	pid = clone(close_fd, top, SIGCHLD, (void *)(long)fd);
	status("clone.nofiles.close.child", pid);
	SHOW("clone.nofiles.close.is.the.childs", "%d", fcntl(fd, F_GETFD));
	close(fd);

	/* vfork: the child runs in the parent's memory while the parent waits. */
	shared = 0;
	pid = vfork();
	if (pid == 0) {
		shared = 99;
		usleep(50 * 1000); /* the parent stays suspended meanwhile */
		shared = 100;
		_exit(3);
	}
	SHOW("vfork.parent.resumes.after.child.exit", "%d", shared);
	status("vfork.child", pid);
	pid = syscall(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		shared = 5;
		syscall(SYS_exit, 4);
	}
	SHOW("clone.vfork.write.seen", "%d", shared);
	status("clone.vfork.child", pid);

	/* The robust list system calls. */
	struct robust_list_head *head = NULL;
	size_t len = 0;
	RET("get_robust_list.self", syscall(SYS_get_robust_list, 0, &head, &len));
	SHOW("get_robust_list.len", "%zu", len);
	SHOW("get_robust_list.head.set.by.glibc", "%d", head != NULL);
	RET("set_robust_list.bad.size", syscall(SYS_set_robust_list, head, 8));
	RET("set_robust_list", syscall(SYS_set_robust_list, head, sizeof *head));
	RET("get_robust_list.no.such.thread", syscall(SYS_get_robust_list, 999999, &head, &len));
	free(stack);
	return 0;
}
