/* futex(2) through syscall(SYS_futex): WAIT/WAKE, the BITSET forms,
 * REQUEUE/CMP_REQUEUE, WAKE_OP, the PRIVATE flag, errors, and timeouts on
 * CLOCK_MONOTONIC and CLOCK_REALTIME. */
#include "../conform.h"
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

static long futex(void *addr, int op, uint32_t val, const void *timeout_or_val2, void *addr2, uint32_t val3) {
	return syscall(SYS_futex, addr, op, val, timeout_or_val2, addr2, val3);
}

static long elapsed_ms(struct timespec a) {
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

/* Waiters: each waits on its word with its op and bitset, then records the
 * result. ready counts those about to wait. */
struct waiter {
	uint32_t *word;
	int op;
	uint32_t bitset;
	long ret;
	int err;
	pthread_t th;
};

static volatile int ready;

static void *wait_thread(void *arg) {
	struct waiter *w = arg;
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	w->ret = futex(w->word, w->op, 0, NULL, NULL, w->bitset);
	w->err = w->ret == -1 ? errno : 0;
	return NULL;
}

/* start begins n waiters and gives them time to block in the kernel. */
static void start(struct waiter *ws, int n) {
	ready = 0;
	for (int i = 0; i < n; i++)
		pthread_create(&ws[i].th, NULL, wait_thread, &ws[i]);
	while (ready < n)
		usleep(1000);
	usleep(200 * 1000);
}

static void finish(const char *name, struct waiter *ws, int n) {
	for (int i = 0; i < n; i++) {
		pthread_join(ws[i].th, NULL);
		SHOW(name, "waiter %d: %ld %s", i, ws[i].ret, ws[i].err ? strerrorname_np(ws[i].err) : "");
	}
}

static uint32_t a, b;

int main(void) {
	struct timespec zero = {0, 0}, ms30 = {0, 30 * 1000000}, bad = {0, 1000000000}, neg = {-1, 0};

	/* Errors and value mismatch. */
	a = 1;
	RET("wait.mismatch", futex(&a, FUTEX_WAIT, 0, NULL, NULL, 0));
	RET("wait.private.mismatch", futex(&a, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	RET("wait.unaligned", futex((char *)&a + 1, FUTEX_WAIT, 1, NULL, NULL, 0));
	RET("wait.bad.nsec", futex(&a, FUTEX_WAIT, 1, &bad, NULL, 0));
	RET("wait.negative.timeout", futex(&a, FUTEX_WAIT, 1, &neg, NULL, 0));
	RET("wait.bitset.zero", futex(&a, FUTEX_WAIT_BITSET, 1, NULL, NULL, 0));
	RET("wake.bitset.zero", futex(&a, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0));
	RET("wake.nobody", futex(&a, FUTEX_WAKE, 1, NULL, NULL, 0));
	RET("wake.private.nobody", futex(&a, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0));
	RET("wake.realtime.flag", futex(&a, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0));
	RET("unknown.op", futex(&a, 99, 1, NULL, NULL, 0));
	RET("cmp_requeue.mismatch", futex(&a, FUTEX_CMP_REQUEUE, 1, (void *)1L, &b, 0));
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RET("wake.shared.unmapped", futex(gone, FUTEX_WAKE, 1, NULL, NULL, 0));
	RET("wake.private.unmapped", futex(gone, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	RET("wait.unmapped", futex(gone, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	RET("requeue.shared.unmapped.target", futex(&a, FUTEX_REQUEUE, 1, (void *)1L, gone, 0));
	RET("cmp_requeue.unmapped", futex(gone, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &b, 0));
	RET("wake_op.unmapped", futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, gone, 0));
	RET("wait.readonly.mismatch", futex(ro, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0));
	RET("wake_op.readonly", futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, ro, 0));

	/* Timeouts: relative for WAIT, absolute for WAIT_BITSET. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RET("wait.timeout.zero", futex(&a, FUTEX_WAIT, 1, &zero, NULL, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RET("wait.timeout.30ms", futex(&a, FUTEX_WAIT_PRIVATE, 1, &ms30, NULL, 0));
	SHOW("wait.timeout.30ms.waited", "%d", elapsed_ms(t0) >= 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RET("wait.realtime.relative.30ms", futex(&a, FUTEX_WAIT | FUTEX_CLOCK_REALTIME, 1, &ms30, NULL, 0));
	SHOW("wait.realtime.relative.30ms.waited", "%d", elapsed_ms(t0) >= 30);
	struct timespec dl = deadline_ms(CLOCK_MONOTONIC, 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RET("wait_bitset.monotonic.deadline", futex(&a, FUTEX_WAIT_BITSET, 1, &dl, NULL, FUTEX_BITSET_MATCH_ANY));
	SHOW("wait_bitset.monotonic.deadline.waited", "%d", elapsed_ms(t0) >= 29);
	dl = deadline_ms(CLOCK_REALTIME, 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RET("wait_bitset.realtime.deadline",
	    futex(&a, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &dl, NULL, FUTEX_BITSET_MATCH_ANY));
	SHOW("wait_bitset.realtime.deadline.waited", "%d", elapsed_ms(t0) >= 29);
	struct timespec past = {1, 0};
	RET("wait_bitset.deadline.past", futex(&a, FUTEX_WAIT_BITSET, 1, &past, NULL, 1));
	RET("wait_bitset.realtime.deadline.past",
	    futex(&a, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 1, &past, NULL, 1));

	/* WAKE wakes at most n, in order. */
	struct waiter ws[4];
	for (int i = 0; i < 3; i++)
		ws[i] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	a = 0;
	start(ws, 3);
	RET("wake.2.of.3", futex(&a, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0));
	RET("wake.rest", futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	finish("wake", ws, 3);

	/* Linux wakes at least one: a count of 0 is taken as 1. */
	for (int i = 0; i < 2; i++)
		ws[i] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	start(ws, 2);
	RET("wake.0.wakes.one", futex(&a, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0));
	RET("wake.0.then.the.other", futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	finish("wake.0", ws, 2);

	/* A shared (non-private) wait is woken by a shared wake. */
	ws[0] = (struct waiter){.word = &a, .op = FUTEX_WAIT};
	start(ws, 1);
	RET("wake.shared", futex(&a, FUTEX_WAKE, 1, NULL, NULL, 0));
	finish("wake.shared", ws, 1);

	/* BITSET: a wake reaches only waiters whose bits it shares. */
	ws[0] = (struct waiter){.word = &a, .op = FUTEX_WAIT_BITSET_PRIVATE, .bitset = 1};
	ws[1] = (struct waiter){.word = &a, .op = FUTEX_WAIT_BITSET_PRIVATE, .bitset = 2};
	ws[2] = (struct waiter){.word = &a, .op = FUTEX_WAIT_BITSET_PRIVATE, .bitset = 6};
	start(ws, 3);
	RET("wake_bitset.8", futex(&a, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 8));
	RET("wake_bitset.2", futex(&a, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 2));
	RET("wake.plain.reaches.bitset", futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	finish("bitset", ws, 3);

	/* REQUEUE: wake 1, move 1 of the other 2 to b. */
	for (int i = 0; i < 3; i++)
		ws[i] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	start(ws, 3);
	RET("requeue.1.1", futex(&a, FUTEX_REQUEUE_PRIVATE, 1, (void *)1L, &b, 0));
	RET("requeue.left.on.a", futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	RET("requeue.moved.to.b", futex(&b, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	finish("requeue", ws, 3);

	/* CMP_REQUEUE: only while a still holds the expected value. */
	for (int i = 0; i < 3; i++)
		ws[i] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	start(ws, 3);
	RET("cmp_requeue.wrong.value", futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)10L, &b, 7));
	RET("cmp_requeue.0.all", futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)10L, &b, 0));
	RET("cmp_requeue.a.empty", futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	RET("cmp_requeue.b.has.all", futex(&b, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	finish("cmp_requeue", ws, 3);
	RET("cmp_requeue.negative.count", futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)-1L, &b, 0));

	/* WAKE_OP: b = op(b); wake on a; if cmp(old b) wake on b too. */
	ws[0] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	ws[1] = (struct waiter){.word = &b, .op = FUTEX_WAIT_PRIVATE};
	b = 0;
	start(ws, 2);
	RET("wake_op.add.eq.true",
	    futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b, FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0)));
	SHOW("wake_op.add.result", "%u", b);
	finish("wake_op", ws, 2);
	ws[0] = (struct waiter){.word = &a, .op = FUTEX_WAIT_PRIVATE};
	ws[1] = (struct waiter){.word = &b, .op = FUTEX_WAIT_PRIVATE, .bitset = 0};
	b = 0;
	start(ws, 2);
	b = 5; /* the waiter on b has already checked its value */
	RET("wake_op.or.ne.false",
	    futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b, FUTEX_OP(FUTEX_OP_OR, 2, FUTEX_OP_CMP_NE, 5)));
	SHOW("wake_op.or.result", "%u", b);
	RET("wake_op.b.still.waiting", futex(&b, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	finish("wake_op.cmp", ws, 2);
	b = 0xff;
	int andn_shift = FUTEX_OP_ANDN | FUTEX_OP_OPARG_SHIFT;
	RET("wake_op.set", futex(&a, FUTEX_WAKE_OP, 1, 0, &b, FUTEX_OP(FUTEX_OP_SET, 3, FUTEX_OP_CMP_LT, 0)));
	SHOW("wake_op.set.result", "%u", b);
	RET("wake_op.andn.shift", futex(&a, FUTEX_WAKE_OP, 1, 0, &b,
					   FUTEX_OP(andn_shift, 1, FUTEX_OP_CMP_GE, 3)));
	SHOW("wake_op.andn.shift.result", "%u", b);
	RET("wake_op.xor.negative", futex(&a, FUTEX_WAKE_OP, 1, 0, &b, FUTEX_OP(FUTEX_OP_XOR, 0xfff, FUTEX_OP_CMP_GT, 0)));
	SHOW("wake_op.xor.negative.result", "%u", b);
	RET("wake_op.bad.op", futex(&a, FUTEX_WAKE_OP, 1, 0, &b, FUTEX_OP(7, 1, FUTEX_OP_CMP_EQ, 0)));
	b = 1;
	RET("wake_op.bad.cmp", futex(&a, FUTEX_WAKE_OP, 1, 0, &b, FUTEX_OP(FUTEX_OP_ADD, 1, 9, 0)));
	SHOW("wake_op.bad.cmp.result", "%u", b);
	RET("wake_op.unaligned", futex(&a, FUTEX_WAKE_OP, 1, 0, (char *)&b + 2, FUTEX_OP(FUTEX_OP_ADD, 1, 0, 0)));
	return 0;
}
