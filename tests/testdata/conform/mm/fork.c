/* Memory across fork: private memory is copied on write (each process sees
 * only its own writes, both before and after the other writes), anonymous
 * MAP_SHARED memory is one memory (each sees the other's writes, pages
 * touched before or after the fork alike), and the parent's memory is
 * unchanged by what the child maps, unmaps or protects. */
#include "../conform.h"
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PG 4096UL
#define RW (PROT_READ | PROT_WRITE)

static int data = 1;
static int bss;

/* await spins until *p == want, for at most about 5 s. */
static int await(volatile int *p, int want) {
	for (int i = 0; i < 5000; i++) {
		if (*p == want)
			return 1;
		usleep(1000);
	}
	return 0;
}

int main(void) {
	int *priv = mmap(NULL, 2 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile int *sh = mmap(NULL, 4 * PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *later = mmap(NULL, PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *heap = malloc(100);
	char *gone = mmap(NULL, 2 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(heap, "parent heap");
	priv[0] = 1;
	sh[0] = 1;
	bss = 1;
	gone[0] = 'g';
	int stack = 1;

	pid_t pid = fork();
	if (pid == 0) {
		/* what the child sees first: the parent's values at fork */
		sh[10] = priv[0] * 1000 + data * 100 + bss * 10 + stack;
		sh[11] = heap[0];
		priv[0] = 2;
		data = 2;
		bss = 2;
		stack = 2;
		strcpy(heap, "child heap");
		sh[0] = 2;
		later[0] = 2; /* never touched before the fork */
		sh[PG / sizeof(int)] = 3; /* another shared page, first touched here */
		munmap(gone, 2 * PG);
		mprotect(priv + PG / sizeof(int), PG, PROT_NONE);
		sh[1] = 1; /* the child has written */
		if (!await(&sh[2], 1)) /* the parent has written */
			_exit(90);
		/* the parent's writes after the fork are not the child's */
		sh[12] = priv[0] * 1000 + data * 100 + bss * 10 + stack;
		sh[13] = sh[3]; /* a shared write of the parent's after the fork */
		_exit(priv[0] == 2 && strcmp(heap, "child heap") == 0 ? 7 : 8);
	}
	SHOW("fork", "%d", pid > 0);
	SHOW("child.wrote", "%d", await(&sh[1], 1));
	SHOW("parent.private.after.child", "%d %d %d %d %s", priv[0], data, bss, stack, heap);
	SHOW("parent.shared.after.child", "%d %d %d", sh[0], later[0], sh[PG / sizeof(int)]);
	SHOW("parent.unmapped.by.child", "%c", gone[0]);
	priv[0] = 3;
	data = 3;
	bss = 3;
	stack = 3;
	priv[PG / sizeof(int)] = 3; /* the child made its copy PROT_NONE */
	sh[3] = 33;
	sh[2] = 1;
	int status = 0;
	RET("wait", waitpid(pid, &status, 0) == pid);
	SHOW("child.exit", "%d %d", WIFEXITED(status), WEXITSTATUS(status));
	SHOW("child.saw.at.fork", "%d %c", sh[10], sh[11]);
	SHOW("child.saw.after", "%d %d", sh[12], sh[13]);
	SHOW("parent.private.final", "%d %d %d %d %d", priv[0], data, bss, stack, priv[PG / sizeof(int)]);

	/* many forks: each child writes every page of its private copy */
	char *big = mmap(NULL, 64 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(big, 'p', 64 * PG);
	int ok = 0;
	for (int i = 0; i < 8; i++) {
		pid_t c = fork();
		if (c == 0) {
			memset(big, 'c', 64 * PG);
			_exit(big[63 * PG] == 'c' ? 0 : 1);
		}
		if (waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
	}
	SHOW("forks", "%d %c%c", ok, big[0], big[64 * PG - 1]);

	/* a child of a child: three owners of one page, then each its own */
	int *chain = mmap(NULL, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	chain[0] = 1;
	pid_t c1 = fork();
	if (c1 == 0) {
		pid_t c2 = fork();
		if (c2 == 0) {
			chain[0] = 3;
			_exit(chain[0]);
		}
		waitpid(c2, &status, 0);
		int grand = WEXITSTATUS(status);
		chain[0] += 10;
		_exit(grand * 20 + chain[0]);
	}
	waitpid(c1, &status, 0);
	SHOW("fork.chain", "%d %d", WEXITSTATUS(status), chain[0]);

	/* faults: each child touches what it may not and is killed by SIGSEGV */
	char *ro = mmap(NULL, 2 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro[0] = 'r';
	ro[PG] = 'n';
	mprotect(ro, PG, PROT_READ);
	mprotect(ro + PG, PG, PROT_NONE);
	for (int k = 0; k < 4; k++) {
		pid_t c = fork();
		if (c == 0) {
			volatile char *v = ro;
			if (k == 0)
				v[0] = 'w'; /* a read-only page shared by fork stays read-only */
			else if (k == 1)
				(void)v[PG]; /* PROT_NONE keeps its frame, but not for the user */
			else if (k == 2)
				v[PG] = 'w';
			else
				_exit(v[0]); /* reading is allowed */
			_exit(99);
		}
		waitpid(c, &status, 0);
		SHOW("fault", "%d signaled %d sig %d exit %d", k, WIFSIGNALED(status),
		     WIFSIGNALED(status) ? WTERMSIG(status) : 0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	mprotect(ro, 2 * PG, PROT_READ);
	SHOW("fault.parent.kept", "%c%c", ro[0], ro[PG]);
	return 0;
}
