/* MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_DONTFORK and MADV_DOFORK: a
 * forked child sees zeros in a wiped range (one page in the middle of a
 * mapping), the parent its data; a range not forked faults in the child.
 * qemu-riscv64 ignores madvise, so Linux is the oracle. */
#include "../../conform/conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

static long page;

/* in_child runs probe in a forked child: its exit status, or the
 * signal that ended it. */
static void in_child(const char *name, char *mem, int (*probe)(char *)) {
	pid_t pid = fork();
	if (pid == 0)
		_exit(probe(mem));
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		SHOW(name, "signal %d", WTERMSIG(status));
	else
		SHOW(name, "exit %d", WEXITSTATUS(status));
}

static int bytes(char *mem) { return mem[0] * 100 + mem[page] * 10 + mem[2 * page]; }

int main(void) {
	page = sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mem[0] = 1, mem[page] = 2, mem[2 * page] = 3;
	RET("wipeonfork.middle", madvise(mem + page, page, MADV_WIPEONFORK));
	in_child("child.wiped", mem, bytes);
	SHOW("parent.after", "%d", bytes(mem));
	RET("keeponfork", madvise(mem, 3 * page, MADV_KEEPONFORK));
	in_child("child.kept", mem, bytes);
	RET("dontfork.last", madvise(mem + 2 * page, page, MADV_DONTFORK));
	in_child("child.dontfork", mem, bytes);
	RET("dofork", madvise(mem, 3 * page, MADV_DOFORK));
	in_child("child.dofork", mem, bytes);
	RET("wipeonfork.all", madvise(mem, 3 * page, MADV_WIPEONFORK));
	pid_t pid = fork();
	if (pid == 0) {
		/* The child's copy keeps the advice: its own child sees zeros
		 * of what it wrote. */
		mem[0] = 7;
		in_child("grandchild", mem, bytes);
		_exit(mem[0]);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("child.wrote", "%d", WEXITSTATUS(status));
	return 0;
}
