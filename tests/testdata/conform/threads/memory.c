/* Memory shared by threads: concurrent first touches of the same fresh
 * pages, a mapping made by one thread used by another, and munmap or
 * mprotect by one thread seen by another (it faults and the process dies
 * with SIGSEGV). */
#include "../conform.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define NTHREADS 8
#define PAGES 256
#define PAGE 4096

static char *region;
static pthread_barrier_t start;

static void *touch(void *arg) {
	long id = (long)arg;
	pthread_barrier_wait(&start);
	for (int p = 0; p < PAGES; p++)
		((volatile long *)(region + p * PAGE))[id] = id + 1;
	return NULL;
}

static void *map_for_main(void *arg) {
	char *m = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		strcpy(m + 5 * PAGE, "made by another thread");
	return m;
}

static volatile int go;

static void *write_after_change(void *arg) {
	while (!go)
		;
	((volatile char *)region)[0] = 1; /* faults: unmapped or read-only */
	return NULL;
}

static void report(const char *name, pid_t pid) {
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		SHOW(name, "signal %s", sigabbrev_np(WTERMSIG(st)));
	else
		SHOW(name, "exit %d", WEXITSTATUS(st));
}

int main(void) {
	region = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_barrier_init(&start, NULL, NTHREADS);
	pthread_t th[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, touch, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	long wrong = 0;
	for (int p = 0; p < PAGES; p++)
		for (long id = 0; id < NTHREADS; id++)
			wrong += ((long *)(region + p * PAGE))[id] != id + 1;
	SHOW("concurrent.first.touch.wrong.words", "%ld", wrong);

	void *m;
	pthread_create(&th[0], NULL, map_for_main, NULL);
	pthread_join(th[0], &m);
	SHOW("mapping.from.another.thread", "%s", (char *)m + 5 * PAGE);
	RET("munmap.it", munmap(m, 16 * PAGE));

	for (int unmap = 1; unmap >= 0; unmap--) {
		pid_t pid = fork();
		if (pid == 0) {
			pthread_create(&th[0], NULL, write_after_change, NULL);
			region[0] = 2; /* present and writable before */
			if (unmap)
				munmap(region, PAGES * PAGE);
			else
				mprotect(region, PAGES * PAGE, PROT_READ);
			go = 1;
			pthread_join(th[0], NULL);
			_exit(0);
		}
		report(unmap ? "write.after.other.thread.munmap" : "write.after.other.thread.mprotect", pid);
	}
	return 0;
}
