/* get_robust_list: a thread's own and its process's other threads' lists,
 * ESRCH for no such thread, EPERM for another user's (Linux's
 * PTRACE_MODE_READ_REALCREDS check). qemu-riscv64 has no get_robust_list
 * (ENOSYS), so Linux is the oracle. */
#include "../../conform/conform.h"
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static volatile int tid, done;

static void *thread(void *arg) {
	tid = syscall(SYS_gettid);
	while (!done)
		usleep(1000);
	return arg;
}

int main(void) {
	void *head;
	size_t len = 0;
	pthread_t p;
	pthread_create(&p, NULL, thread, NULL);
	while (!tid)
		usleep(1000);
	RET("self", syscall(SYS_get_robust_list, 0, &head, &len));
	SHOW("self.len", "%zu", len);
	RET("other-thread", syscall(SYS_get_robust_list, tid, &head, &len));
	RET("no-such", syscall(SYS_get_robust_list, 999999, &head, &len));
	RET("bad-len", syscall(SYS_get_robust_list, 0, &head, BAD));
	done = 1;
	pthread_join(p, NULL);
	pid_t parent = getpid();
	if (fork() == 0) {
		setuid(1);
		RET("root-parent.as-uid-1", syscall(SYS_get_robust_list, parent, &head, &len));
		RET("self.as-uid-1", syscall(SYS_get_robust_list, 0, &head, &len));
		_exit(0);
	}
	wait(NULL);
	if (fork() == 0) {
		RET("child-of-root.as-root", syscall(SYS_get_robust_list, parent, &head, &len));
		_exit(0);
	}
	wait(NULL);
	return 0;
}
