/* Robust futexes: a thread that exits holding a robust mutex leaves it
 * FUTEX_OWNER_DIED (the kernel walks its set_robust_list list at exit), so
 * the next locker gets EOWNERDEAD; a waiter blocked on it is woken.
 * (qemu-riscv64 answers set_robust_list with ENOSYS, and glibc then walks
 * the list itself at thread exit: the oracle's lines are Linux's all the
 * same.) */
#include "../conform.h"
#include <pthread.h>

static pthread_mutex_t robust;
static pthread_barrier_t locked;

static void *lock_and_exit(void *arg) {
	SHOW("owner.lock", "%d", pthread_mutex_lock(&robust));
	pthread_barrier_wait(&locked);
	usleep((long)arg * 1000);
	return NULL; /* exits holding the lock */
}

static void *waiter(void *arg) {
	return (void *)(long)pthread_mutex_lock(&robust);
}

int main(void) {
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &attr);
	pthread_barrier_init(&locked, NULL, 2);

	/* The owner is gone before the next lock. */
	pthread_t th;
	pthread_create(&th, NULL, lock_and_exit, (void *)0L);
	pthread_barrier_wait(&locked);
	pthread_join(th, NULL);
	SHOW("lock.after.owner.died", "%s", strerrorname_np(pthread_mutex_lock(&robust)));
	SHOW("consistent", "%d", pthread_mutex_consistent(&robust));
	SHOW("unlock", "%d", pthread_mutex_unlock(&robust));
	SHOW("lock.again", "%d", pthread_mutex_lock(&robust));
	SHOW("unlock.again", "%d", pthread_mutex_unlock(&robust));

	/* A waiter blocked on the lock is woken by the owner's death. */
	pthread_create(&th, NULL, lock_and_exit, (void *)200L);
	pthread_barrier_wait(&locked);
	pthread_t w;
	pthread_create(&w, NULL, waiter, NULL);
	void *ret;
	pthread_join(w, &ret);
	SHOW("waiter.woken.with", "%s", strerrorname_np((int)(long)ret));
	pthread_join(th, NULL);

	return 0;
}
