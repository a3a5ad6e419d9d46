/* clone3 as glibc calls it. With CLONE_CLEAR_SIGHAND, as posix_spawn
 * (system, popen) makes its children: handlers go back to SIG_DFL, ignored
 * signals stay ignored. pthread_create fills in the pidfd field without
 * CLONE_PIDFD, which Linux ignores. qemu-riscv64 has no clone3 (ENOSYS),
 * so Linux is the oracle. */
#include "../../conform/conform.h"
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void handler(int sig) { (void)sig; }

static const char *disposition(int sig)
{
	struct sigaction sa;
	sigaction(sig, NULL, &sa);
	if (sa.sa_handler == SIG_DFL)
		return "default";
	if (sa.sa_handler == SIG_IGN)
		return "ignored";
	return "handler";
}

static int pidfd_slot;

static long clone3_flags(uint64_t flags)
{
	struct clone_args args = {.flags = flags, .exit_signal = SIGCHLD,
				  .pidfd = (uintptr_t)&pidfd_slot};
	return syscall(SYS_clone3, &args, sizeof args);
}

int main(void)
{
	struct sigaction sa = {.sa_handler = handler};
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGUSR2, SIG_IGN);

	long pid = clone3_flags(CLONE_CLEAR_SIGHAND);
	if (pid == 0) {
		SHOW("child SIGUSR1", "%s", disposition(SIGUSR1));
		SHOW("child SIGUSR2", "%s", disposition(SIGUSR2));
		_exit(5);
	}
	int status;
	RET("wait", waitpid(pid, &status, 0) == pid);
	SHOW("child status", "%d", WEXITSTATUS(status));
	SHOW("parent SIGUSR1", "%s", disposition(SIGUSR1));

	pid = clone3_flags(0);
	if (pid == 0) {
		SHOW("plain child SIGUSR1", "%s", disposition(SIGUSR1));
		_exit(0);
	}
	waitpid(pid, &status, 0);
	SHOW("pidfd field untouched", "%d", pidfd_slot);

	RET("with CLONE_SIGHAND", clone3_flags(CLONE_CLEAR_SIGHAND | CLONE_SIGHAND | CLONE_VM));

	/* clone(2) takes 32 bits of flags: CLONE_CLEAR_SIGHAND there is lost. */
	pid = syscall(SYS_clone, (unsigned long)CLONE_CLEAR_SIGHAND | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		SHOW("clone(2) child SIGUSR1", "%s", disposition(SIGUSR1));
		_exit(0);
	}
	waitpid(pid, &status, 0);

	/* system() forks through clone3 and leaves errno alone. */
	errno = 0;
	int st = system("exit 4");
	SHOW("system", "%d errno %d", WEXITSTATUS(st), errno);
	return 0;
}
