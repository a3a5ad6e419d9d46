/* The counter CSRs from user mode, as Linux 6.12 sets scounteren: time is
 * readable, cycle and instret raise SIGILL (qemu-riscv64 lets all three
 * through, so Linux itself is the oracle). */
#include "../../conform/conform.h"
#include <signal.h>
#include <sys/wait.h>

static void child(const char *name, int which) {
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long v;
		if (which == 0)
			__asm__ volatile("rdtime %0" : "=r"(v));
		else if (which == 1)
			__asm__ volatile("rdcycle %0" : "=r"(v));
		else
			__asm__ volatile("rdinstret %0" : "=r"(v));
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	SHOW(name, "%s", WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "readable");
}

int main(void) {
	child("rdtime", 0);
	child("rdcycle", 1);
	child("rdinstret", 2);
	return 0;
}
