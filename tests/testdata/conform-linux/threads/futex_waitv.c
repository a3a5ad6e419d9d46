/* futex_waitv(2): the argument checks (flags, count, clock, each word's
 * flags, alignment, value and reserved field), EFAULT and EAGAIN, an
 * absolute timeout on either clock, and a wake of one of the words,
 * private (another thread) or shared (another process), returning its
 * index (LTP's futex_waitv01-03). */
#include "../../conform/conform.h"
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef FUTEX2_SIZE_U32 /* linux/futex.h before 6.7 */
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_SIZE_U64 0x03
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif

static long waitv(struct futex_waitv *w, unsigned n, unsigned flags, struct timespec *to, int clock) {
	return syscall(SYS_futex_waitv, w, n, flags, to, clock);
}

static uint32_t words[4];
static struct futex_waitv vec[4];

static void fill(struct futex_waitv *v, uint32_t *word, unsigned flags) {
	v->val = *word;
	v->uaddr = (uintptr_t)word;
	v->flags = flags;
	v->__reserved = 0;
}

static long thread_result;
static void *waiter(void *arg) {
	struct timespec to = deadline_ms(CLOCK_MONOTONIC, 10000);
	thread_result = waitv(vec, 3, 0, &to, CLOCK_MONOTONIC);
	return arg;
}

/* wake wakes word until one waiter is woken (the waiter may not be
 * queued yet). */
static int wake(uint32_t *word, int op) {
	for (int i = 0; i < 1000; i++) {
		if (syscall(SYS_futex, word, op, 1, NULL, NULL, 0) == 1)
			return 1;
		usleep(1000);
	}
	return 0;
}

int main(void) {
	for (int i = 0; i < 4; i++)
		fill(&vec[i], &words[i], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	struct timespec past = {0, 0};
	RET("flags", waitv(vec, 1, 1, NULL, 0));
	RET("none", waitv(vec, 0, 0, NULL, 0));
	RET("too_many", waitv(vec, 129, 0, NULL, 0));
	RET("null", waitv(NULL, 1, 0, NULL, 0));
	RET("clock_tai", waitv(vec, 1, 0, &past, CLOCK_TAI));
	struct timespec bad = {0, 1000000000};
	RET("bad_timespec", waitv(vec, 1, 0, &bad, CLOCK_MONOTONIC));
	RET("bad_timeout_pointer", waitv(vec, 1, 0, (struct timespec *)8, CLOCK_MONOTONIC));
	RET("bad_vector_pointer", waitv((struct futex_waitv *)8, 1, 0, NULL, 0));

	struct futex_waitv one;
	fill(&one, &words[0], FUTEX2_PRIVATE);
	RET("no_size", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U64 | FUTEX2_PRIVATE);
	RET("size_u64", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U32 | 0x40);
	RET("unknown_flag", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	one.__reserved = 1;
	RET("reserved", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	one.val = 1ULL << 32;
	RET("value_too_big", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	one.uaddr += 1;
	RET("misaligned", waitv(&one, 1, 0, NULL, 0));
	one.uaddr = 8;
	RET("unmapped", waitv(&one, 1, 0, NULL, 0));
	fill(&one, &words[0], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	one.val = 7;
	RET("value_differs", waitv(&one, 1, 0, NULL, 0));

	struct timespec soon = deadline_ms(CLOCK_MONOTONIC, 50);
	RET("timeout.monotonic", waitv(vec, 4, 0, &soon, CLOCK_MONOTONIC));
	soon = deadline_ms(CLOCK_REALTIME, 50);
	RET("timeout.realtime", waitv(vec, 4, 0, &soon, CLOCK_REALTIME));
	RET("timeout.past", waitv(vec, 4, 0, &past, CLOCK_REALTIME));

	/* Another thread waits on three words; the third is woken. */
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	SHOW("woke", "%d", wake(&words[2], FUTEX_WAKE_PRIVATE));
	pthread_join(th, NULL);
	SHOW("thread.index", "%ld", thread_result);
	pthread_create(&th, NULL, waiter, NULL);
	SHOW("woke.first", "%d", wake(&words[0], FUTEX_WAKE_PRIVATE));
	pthread_join(th, NULL);
	SHOW("thread.index.first", "%ld", thread_result);

	/* A shared word, woken from another process. */
	uint32_t *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct futex_waitv sv[2];
	fill(&sv[0], &words[3], FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	fill(&sv[1], shared, FUTEX2_SIZE_U32);
	pid_t pid = fork();
	if (pid == 0)
		_exit(wake(shared, FUTEX_WAKE) ? 0 : 1);
	struct timespec to = deadline_ms(CLOCK_MONOTONIC, 10000);
	RET("shared.index", waitv(sv, 2, 0, &to, CLOCK_MONOTONIC));
	int status;
	waitpid(pid, &status, 0);
	SHOW("shared.child", "%d", WEXITSTATUS(status));
	return 0;
}
