/* Futexes shared between processes through MAP_SHARED memory: a
 * process-shared POSIX semaphore and a process-shared mutex and condition
 * variable across fork (what multiprocessing's locks and queues use), and a
 * raw futex in a file mapped at different addresses by two processes. A
 * FUTEX_PRIVATE_FLAG wait is its process's own: another process's wake
 * does not reach it. */
#include "../conform.h"
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static long futex(void *addr, int op, uint32_t val, const struct timespec *timeout) {
	return syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

static int child_status(pid_t pid) {
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* wake_one wakes the word at addr until it wakes a waiter (the child may
 * not be waiting yet), for up to 10 s; it returns how many it woke. */
static long wake_one(uint32_t *addr, int op) {
	for (int i = 0; i < 1000; i++) {
		long n = futex(addr, op, 1, NULL);
		if (n != 0)
			return n;
		usleep(10000);
	}
	return 0;
}

struct shared {
	sem_t sem;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int ready;
};

int main(void) {
	struct shared *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	RET("sem_init pshared", sem_init(&s->sem, 1, 0));
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec t = deadline_ms(CLOCK_REALTIME, 10000);
		_exit(sem_timedwait(&s->sem, &t) == 0 ? 0 : errno);
	}
	usleep(50000);
	RET("sem_post", sem_post(&s->sem));
	SHOW("the child's sem_timedwait", "%s", child_status(pid) == 0 ? "woken" : "not woken");

	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->mu, &ma);
	pthread_cond_init(&s->cond, &ca);
	pid = fork();
	if (pid == 0) {
		struct timespec t = deadline_ms(CLOCK_REALTIME, 10000);
		int err = 0;
		pthread_mutex_lock(&s->mu);
		while (!s->ready && err == 0)
			err = pthread_cond_timedwait(&s->cond, &s->mu, &t);
		pthread_mutex_unlock(&s->mu);
		_exit(err);
	}
	usleep(50000);
	pthread_mutex_lock(&s->mu);
	s->ready = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->mu);
	SHOW("the child's pthread_cond_timedwait", "%s", child_status(pid) == 0 ? "signalled" : "timed out");

	/* A file mapped twice: at a different address in the child. */
	int fd = open("shared.futex", O_RDWR | O_CREAT | O_TRUNC, 0644);
	RET("ftruncate", ftruncate(fd, 8192));
	uint32_t *word = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	word += 1024 + 3; /* in the second page */
	pid = fork();
	if (pid == 0) {
		uint32_t *mine = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		mine += 1024 + 3;
		struct timespec t = {10, 0};
		_exit(mine != word && futex(mine, FUTEX_WAIT, 0, &t) == 0 ? 0 : 1);
	}
	SHOW("FUTEX_WAKE from the other mapping", "%ld woken", wake_one(word, FUTEX_WAKE));
	SHOW("the child's FUTEX_WAIT", "%s", child_status(pid) == 0 ? "woken" : "not woken");

	/* Private: the child waits in its own process. */
	pid = fork();
	if (pid == 0) {
		struct timespec t = {0, 300000000};
		_exit(futex(word, FUTEX_WAIT_PRIVATE, 0, &t) == -1 && errno == ETIMEDOUT ? 0 : 1);
	}
	usleep(100000);
	SHOW("FUTEX_WAKE_PRIVATE from the parent", "%ld woken", futex(word, FUTEX_WAKE_PRIVATE, 1, NULL));
	SHOW("FUTEX_WAKE from the parent", "%ld woken", futex(word, FUTEX_WAKE, 1, NULL));
	SHOW("the child's FUTEX_WAIT_PRIVATE", "%s", child_status(pid) == 0 ? "timed out" : "woken");
	unlink("shared.futex");
	return 0;
}
