/* clone(2) beyond fork: raw threads with the tid words (PARENT_SETTID,
 * CHILD_SETTID, CHILD_CLEARTID + futex wake), TLS, and flag checks.
 * (qemu-riscv64 runs CLONE_VM processes and vfork differently from Linux:
 * tests/threads_test.go checks those against Linux's documented behaviour.) */
#include "../conform.h"
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define STACK (64 * 1024)

static volatile int shared;

static int set_shared(void *arg) {
	shared = (int)(long)arg;
	return 7;
}

static void status(const char *name, pid_t pid) {
	int st = 0;
	pid_t r = waitpid(pid, &st, __WALL);
	SHOW(name, "%s exited=%d code=%d", r == pid ? "reaped" : "lost", WIFEXITED(st), WEXITSTATUS(st));
}

static volatile pid_t thread_tid_seen, thread_pid_seen;
static volatile unsigned long thread_tp;

static int raw_thread(void *arg) {
	thread_tid_seen = syscall(SYS_gettid);
	thread_pid_seen = syscall(SYS_getpid);
	unsigned long tp;
	__asm__ volatile("mv %0, tp" : "=r"(tp));
	thread_tp = tp;
	syscall(SYS_exit, 0); /* this thread only */
	return 0;
}

int main(void) {
	char *stack = malloc(STACK);
	char *top = stack + STACK;

	/* Without CLONE_VM the child writes its own copy. */
	shared = 0;
	pid_t pid = clone(set_shared, top, SIGCHLD, (void *)43L);
	status("clone.novm.child", pid);
	SHOW("clone.novm.write.seen", "%d", shared);

	/* A raw thread: the tid words, TLS, and the clear-tid futex wake. */
	pid_t ptid = 0;
	static volatile pid_t ctid = -1;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
		    CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	static char tls_block[256];
	pid_t tid = clone(raw_thread, top, flags, NULL, &ptid, tls_block + 64, &ctid);
	SHOW("thread.tid.positive", "%d", tid > 0);
	SHOW("thread.parent_settid", "%d", ptid == tid);
	while (ctid != 0) {
		pid_t v = ctid;
		if (v != 0)
			syscall(SYS_futex, &ctid, FUTEX_WAIT, v, NULL, NULL, 0);
	}
	SHOW("thread.cleartid.zero", "%d", ctid);
	SHOW("thread.gettid", "%d", thread_tid_seen == tid);
	SHOW("thread.getpid", "%d", thread_pid_seen == getpid());
	SHOW("thread.tls", "%d", thread_tp == (unsigned long)(tls_block + 64));
	errno = 0;
	SHOW("thread.not.a.child", "%d %s", (int)waitpid(tid, NULL, WNOHANG), strerrorname_np(errno));

	/* CLONE_CHILD_SETTID writes the tid in the child's memory. */
	static volatile pid_t settid = 0;
	tid = clone(raw_thread, top, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID, NULL, NULL, NULL, &settid);
	/* Set to the tid, then cleared at exit. Read once per wait: a second
	 * read can see the cleared 0 after the wake and wait for 0 forever. */
	for (pid_t v; (v = settid) != 0;)
		syscall(SYS_futex, &settid, FUTEX_WAIT, v, NULL, NULL, 0);
	SHOW("thread.child_settid.then.cleared", "%d", tid > 0);

	/* Invalid combinations. */
	RET("clone.thread.without.sighand", syscall(SYS_clone, CLONE_VM | CLONE_THREAD, top, 0, 0, 0));
	RET("clone.sighand.without.vm", syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, top, 0, 0, 0));
	free(stack);
	return 0;
}
