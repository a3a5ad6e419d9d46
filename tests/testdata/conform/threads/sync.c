/* More of glibc's thread synchronisation over futexes: timed waits on both
 * clocks, rwlocks, semaphores, pthread_once, thread-specific data with
 * destructors, a spin lock, and errors Linux defines for them. */
#include "../conform.h"
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static pthread_spinlock_t spin;
static int once_runs, destructor_runs, readers_inside, max_readers;
static long spin_counter;

static void init_once(void) { once_runs++; }
static void destroy(void *v) { __atomic_fetch_add(&destructor_runs, 1, __ATOMIC_SEQ_CST); free(v); }

static void *reader(void *arg) {
	pthread_once(&once, init_once);
	pthread_setspecific(key, malloc(8));
	pthread_rwlock_rdlock(&rw);
	int n = __atomic_add_fetch(&readers_inside, 1, __ATOMIC_SEQ_CST);
	for (int m = max_readers; n > m && !__atomic_compare_exchange_n(&max_readers, &m, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);)
		;
	sem_wait(&sem); /* all readers are inside together before any leaves */
	__atomic_sub_fetch(&readers_inside, 1, __ATOMIC_SEQ_CST);
	pthread_rwlock_unlock(&rw);
	for (int i = 0; i < 1000; i++) {
		pthread_spin_lock(&spin);
		spin_counter++;
		pthread_spin_unlock(&spin);
	}
	return NULL;
}

static void *signal_later(void *arg) {
	usleep(30 * 1000);
	pthread_mutex_lock(&mu);
	*(int *)arg = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void) {
	/* Timed waits that time out, on CLOCK_REALTIME and CLOCK_MONOTONIC. */
	struct timespec t = deadline_ms(CLOCK_REALTIME, 30);
	pthread_mutex_lock(&mu);
	SHOW("cond_timedwait.realtime", "%s", strerrorname_np(pthread_cond_timedwait(&cond, &mu, &t)));
	t = deadline_ms(CLOCK_MONOTONIC, 30);
	SHOW("cond_clockwait.monotonic", "%s", strerrorname_np(pthread_cond_clockwait(&cond, &mu, CLOCK_MONOTONIC, &t)));
	pthread_mutex_unlock(&mu);

	/* A timed wait that is signalled in time. */
	int flag = 0;
	pthread_t th;
	pthread_create(&th, NULL, signal_later, &flag);
	t = deadline_ms(CLOCK_REALTIME, 10000);
	pthread_mutex_lock(&mu);
	int r = 0;
	while (!flag && r == 0)
		r = pthread_cond_timedwait(&cond, &mu, &t);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	SHOW("cond_timedwait.signalled", "%d flag=%d", r, flag);

	/* A mutex held by another thread times out; an error-checking one
	 * reports relocking and foreign unlocks. */
	pthread_mutex_lock(&mu);
	t = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("mutex_timedlock.self.normal", "%s", strerrorname_np(pthread_mutex_timedlock(&mu, &t)));
	pthread_mutex_unlock(&mu);
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_t ec;
	pthread_mutex_init(&ec, &attr);
	SHOW("errorcheck.lock", "%d", pthread_mutex_lock(&ec));
	SHOW("errorcheck.relock", "%s", strerrorname_np(pthread_mutex_lock(&ec)));
	SHOW("errorcheck.unlock", "%d", pthread_mutex_unlock(&ec));
	SHOW("errorcheck.unlock.unowned", "%s", strerrorname_np(pthread_mutex_unlock(&ec)));
	SHOW("trylock.free", "%d", pthread_mutex_trylock(&mu));
	SHOW("trylock.busy", "%s", strerrorname_np(pthread_mutex_trylock(&mu)));
	pthread_mutex_unlock(&mu);

	/* Semaphores: a timed wait times out, then a post lets it through. */
	sem_init(&sem, 0, 0);
	t = deadline_ms(CLOCK_REALTIME, 20);
	RET("sem_timedwait.timeout", sem_timedwait(&sem, &t));
	RET("sem_trywait.empty", sem_trywait(&sem));
	sem_post(&sem);
	RET("sem_trywait.posted", sem_trywait(&sem));

	/* Readers share the rwlock; once runs once; TSD destructors run at
	 * each thread's exit; the spin lock guards a counter. */
	pthread_key_create(&key, destroy);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	pthread_t rs[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&rs[i], NULL, reader, NULL);
	while (__atomic_load_n(&readers_inside, __ATOMIC_SEQ_CST) < 4)
		usleep(1000);
	SHOW("rwlock.trywrlock.while.read", "%s", strerrorname_np(pthread_rwlock_trywrlock(&rw)));
	for (int i = 0; i < 4; i++)
		sem_post(&sem);
	for (int i = 0; i < 4; i++)
		pthread_join(rs[i], NULL);
	SHOW("rwlock.readers.together", "%d", max_readers);
	SHOW("rwlock.wrlock.after", "%d", pthread_rwlock_wrlock(&rw));
	SHOW("rwlock.unlock", "%d", pthread_rwlock_unlock(&rw));
	SHOW("once.runs", "%d", once_runs);
	SHOW("tsd.destructors", "%d", destructor_runs);
	SHOW("spin.counter", "%ld", spin_counter);
	return 0;
}
