/* MAP_GROWSDOWN: a fault below the mapping extends it (and /proc's maps
 * shows the larger range), down to Linux's stack_guard_gap (256 pages)
 * above the mapping below; within the gap the fault is SIGSEGV, as LTP's
 * mmap18. qemu-riscv64 keeps its own stacks, so Linux is the oracle. */
#include "../../conform/conform.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

static long page;

/* touch writes at addr in a child: its exit status, or the signal. */
static void touch(const char *name, char *addr) {
	pid_t pid = fork();
	if (pid == 0) {
		*(volatile char *)addr = 1;
		_exit(*(volatile char *)addr == 1 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		SHOW(name, "signal %d", WTERMSIG(status));
	else
		SHOW(name, "exit %d", WEXITSTATUS(status));
}

int main(void) {
	page = sysconf(_SC_PAGESIZE);
	/* Reserve room: 300 pages free below a 4-page MAP_GROWSDOWN mapping. */
	char *area = mmap(NULL, 304 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(area, 304 * page);
	char *stack = mmap(area + 300 * page, 4 * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED, -1, 0);
	SHOW("mapped", "%d", stack == area + 300 * page);
	touch("top", stack + 4 * page - 1);
	touch("one-below", stack - 1);
	touch("ten-below", stack - 10 * page);
	touch("within-gap-of-nothing", stack - 299 * page);
	/* A page mapped below: the stack may not come within 256 pages of it. */
	char *blocker = mmap(area, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	SHOW("blocker", "%d", blocker == area);
	touch("near-blocker", area + 100 * page);
	touch("clear-of-blocker", area + 260 * page);
	touch("blocker-itself", area);
	char *plain = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	touch("plain-below", plain - page);
	return 0;
}
