/* The F registers and fcsr belong to each thread: they survive system
 * calls, interrupts, a signal handler that uses them, and other threads
 * that use them on the same hart. (The kernel saves them only when a
 * thread has written them since it last ran, and skips writing fcsr when
 * it already holds the value.) */
#include "../conform.h"
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>

#define F(n) "fld f" #n ", " #n "*8(%[in])\n"
#define S(n) "fsd f" #n ", " #n "*8(%[out])\n"
#define ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) \
	M(12) M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) \
	M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31)
#define CLOBBER "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", \
	"f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", \
	"f22", "f23", "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31"

/* across_call loads all 32 F registers, makes system call nr n times in a
 * row without touching them, and reports how many came back changed. */
static int across_call(double seed, long nr, int n) {
	double in[32], out[32];
	for (int i = 0; i < 32; i++)
		in[i] = seed + i * 1.25;
	register long a0 __asm__("a0");
	register long a7 __asm__("a7") = nr;
	register long count __asm__("t0") = n;
	__asm__ volatile(ALL(F)
			 "1: ecall\n"
			 "addi t0, t0, -1\n"
			 "bnez t0, 1b\n" ALL(S)
			 : "=r"(a0), "+r"(count)
			 : [in] "r"(in), [out] "r"(out), "r"(a7)
			 : "memory", CLOBBER);
	int changed = 0;
	for (int i = 0; i < 32; i++)
		changed += out[i] != in[i];
	return changed;
}

/* fcsr's rounding mode and flags, read and written directly (glibc's
 * fenv functions are in libm). */
enum { RTZ = 1, RDN = 2, RUP = 3, NX = 1, OF = 4 };
static inline void set_rm(long rm) { __asm__ volatile("fsrm %0" ::"r"(rm)); }
static inline long get_rm(void) {
	long r;
	__asm__ volatile("frrm %0" : "=r"(r));
	return r;
}
static inline void set_flags(long f) { __asm__ volatile("fsflags %0" ::"r"(f)); }
static inline long get_flags(void) {
	long r;
	__asm__ volatile("frflags %0" : "=r"(r));
	return r;
}

static volatile double sink;

static void handler(int sig) {
	(void)sig;
	double x = 3.0; /* the handler dirties F registers and fcsr's flags */
	for (int i = 0; i < 100; i++)
		x = x / 7.0 + 1.0;
	sink = x;
	set_rm(RTZ);
}

static volatile int stop;

static void *churn(void *arg) {
	double seed = *(double *)arg;
	long bad = 0;
	set_rm(RDN);
	while (!stop) {
		bad += across_call(seed, SYS_sched_yield, 3);
		if (get_rm() != RDN)
			bad++;
	}
	return (void *)bad;
}

int main(void) {
	SHOW("getppid x1000", "%d changed", across_call(1.5, SYS_getppid, 1000));
	SHOW("sched_yield x100", "%d changed", across_call(-7.75, SYS_sched_yield, 100));

	set_rm(RUP);
	set_flags(NX | OF);
	for (int i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	SHOW("round after calls", "%s", get_rm() == RUP ? "upward" : "changed");
	SHOW("flags after calls", "%s", get_flags() == (NX | OF) ? "inexact overflow" : "changed");

	signal(SIGUSR1, handler);
	set_flags(0);
	double in[32], out[32];
	for (int i = 0; i < 32; i++)
		in[i] = 100.5 - i;
	register long a0 __asm__("a0") = getpid();
	register long a1 __asm__("a1") = SIGUSR1;
	register long a7 __asm__("a7") = SYS_kill;
	__asm__ volatile(ALL(F) "ecall\n" ALL(S)
			 : "+r"(a0)
			 : "r"(a1), [in] "r"(in), [out] "r"(out), "r"(a7)
			 : "memory", CLOBBER);
	int changed = 0;
	for (int i = 0; i < 32; i++)
		changed += out[i] != in[i];
	SHOW("after a handler", "kill %ld, %d changed, round %s, flags %s", (long)a0, changed,
	     get_rm() == RUP ? "upward" : "changed", get_flags() == 0 ? "clear" : "set");

	pthread_t t[3];
	double seeds[3] = {10.5, 20.25, 30.125};
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, &seeds[i]);
	long bad = 0;
	for (int i = 0; i < 200; i++) {
		bad += across_call(-1.0, SYS_sched_yield, 5);
		if (get_rm() != RUP)
			bad++;
	}
	stop = 1;
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	SHOW("four threads", "%ld changed", bad);
	return 0;
}
