/* A pthreads program: 8 threads sharing a mutex-guarded counter, a
 * condition variable, a barrier, thread-local storage, join results, a
 * detached thread; one pid, distinct tids. */
#include "../conform.h"
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define NTHREADS 8
#define ROUNDS 2000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static long counter;
static int turn; /* the condition: whose turn it is, 0..NTHREADS */
static __thread int tls = 100;
static pid_t pids[NTHREADS], tids[NTHREADS];
static int tls_ok[NTHREADS], serial_count;

static void *worker(void *arg) {
	int id = (int)(long)arg;
	pids[id] = getpid();
	tids[id] = gettid();
	tls_ok[id] = tls == 100;
	tls = id;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	/* Take turns in id order: each waits on the condition for its turn. */
	pthread_mutex_lock(&mu);
	while (turn != id)
		pthread_cond_wait(&cond, &mu);
	turn++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mu);
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		__atomic_fetch_add(&serial_count, 1, __ATOMIC_SEQ_CST);
	tls_ok[id] &= tls == id;
	return (void *)(long)(id * id);
}

static pthread_mutex_t detached_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t detached_cond = PTHREAD_COND_INITIALIZER;
static int detached_done;

static void *detached(void *arg) {
	pthread_mutex_lock(&detached_mu);
	detached_done = 1;
	pthread_cond_signal(&detached_cond);
	pthread_mutex_unlock(&detached_mu);
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		RET("pthread_create", pthread_create(&th[i], NULL, worker, (void *)(long)i));
	long sum = 0;
	int joined = 0;
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;
		if (pthread_join(th[i], &ret) == 0)
			joined++;
		sum += (long)ret;
	}
	SHOW("joined", "%d", joined);
	SHOW("join.results.sum", "%ld", sum);
	SHOW("counter", "%ld", counter);
	SHOW("turns", "%d", turn);
	SHOW("barrier.serial.threads", "%d", serial_count);
	int same_pid = 1, distinct = 1, tls_all = 1;
	for (int i = 0; i < NTHREADS; i++) {
		same_pid &= pids[i] == getpid();
		distinct &= tids[i] != getpid();
		tls_all &= tls_ok[i];
		for (int j = 0; j < i; j++)
			distinct &= tids[i] != tids[j];
	}
	SHOW("getpid.same.in.all", "%d", same_pid);
	SHOW("gettid.distinct", "%d", distinct);
	SHOW("main.gettid.is.pid", "%d", gettid() == getpid());
	SHOW("tls.per.thread", "%d", tls_all);
	SHOW("tls.main.untouched", "%d", tls);

	pthread_t d;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	RET("pthread_create.detached", pthread_create(&d, &attr, detached, NULL));
	pthread_mutex_lock(&detached_mu);
	while (!detached_done)
		pthread_cond_wait(&detached_cond, &detached_mu);
	pthread_mutex_unlock(&detached_mu);
	SHOW("detached.ran", "%d", detached_done);

	/* Threads of threads, joined in reverse. */
	pthread_t again[NTHREADS];
	pthread_barrier_destroy(&barrier);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	counter = 0;
	turn = 0;
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&again[i], NULL, worker, (void *)(long)i);
	sum = 0;
	for (int i = NTHREADS - 1; i >= 0; i--) {
		void *ret;
		pthread_join(again[i], &ret);
		sum += (long)ret;
	}
	SHOW("second.round.sum", "%ld", sum);
	SHOW("second.round.counter", "%ld", counter);
	return 0;
}
