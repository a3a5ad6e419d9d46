/* A page unmapped by one thread while another thread writes it in a loop
 * that makes no system call: the writer must fault, and the page's old
 * frame, likely the next one handed out, must not take the writer's stores
 * once it backs new memory. On several harts the writer runs in U-mode
 * elsewhere, on a translation that munmap has to shoot down. */
#include "../conform.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define PAGE 4096
#define ROUNDS 20
#define FRESH 16

static volatile long *target;
static sigjmp_buf writer_jump;
static atomic_int started, faulted;

static void on_segv(int sig) {
	(void)sig;
	siglongjmp(writer_jump, 1);
}

static void *writer(void *arg) {
	(void)arg;
	if (sigsetjmp(writer_jump, 1)) {
		atomic_store(&faulted, 1);
		return NULL;
	}
	atomic_store(&started, 1);
	for (long i = 0;; i++)
		for (int w = 0; w < PAGE / 8; w++)
			target[w] = i;
}

int main(void) {
	struct sigaction sa = {.sa_handler = on_segv};
	sigaction(SIGSEGV, &sa, NULL);
	int faults = 0, intact = 0;
	for (int round = 0; round < ROUNDS; round++) {
		target = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (target == MAP_FAILED)
			return 1;
		atomic_store(&started, 0);
		atomic_store(&faulted, 0);
		pthread_t t;
		if (pthread_create(&t, NULL, writer, NULL) != 0)
			return 1;
		while (!atomic_load(&started))
			;
		usleep(1000);
		munmap((void *)target, PAGE);
		unsigned char *fresh[FRESH];
		for (int k = 0; k < FRESH; k++) {
			fresh[k] = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (fresh[k] == MAP_FAILED)
				return 1;
			memset(fresh[k], 0x5a, PAGE);
		}
		pthread_join(t, NULL);
		int clean = 1;
		for (int k = 0; k < FRESH; k++) {
			for (int i = 0; i < PAGE; i++)
				if (fresh[k][i] != 0x5a)
					clean = 0;
			munmap(fresh[k], PAGE);
		}
		faults += atomic_load(&faulted);
		intact += clean;
	}
	SHOW("writer faulted after munmap", "%d of %d rounds", faults, ROUNDS);
	SHOW("new memory intact", "%d of %d rounds", intact, ROUNDS);
	return 0;
}
