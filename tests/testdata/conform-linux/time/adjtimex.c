/* adjtimex and clock_adjtime: the clock model's starting state, what a
 * change reads back, the checks and who may change it. Linux is the
 * oracle: under qemu-user the host's clock would be adjusted. Only
 * fields that do not drift with time are printed. */
#include "../../conform/conform.h"
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>

static void show(const char *name, struct timex *t) {
	SHOW(name, "status %#x constant %ld tick %ld precision %ld tolerance %ld freq %ld", t->status, t->constant,
	     t->tick, t->precision, t->tolerance, t->freq);
}

int main(void) {
	struct timex t;
	memset(&t, 0, sizeof t);
	RET("read", adjtimex(&t));
	show("start", &t);
	SHOW("start.errors", "%d %ld", t.maxerror >= 16000000, t.esterror);

	memset(&t, 0, sizeof t);
	t.modes = ADJ_STATUS;
	t.status = STA_PLL;
	RET("status.pll", adjtimex(&t));
	show("pll", &t);
	t.modes = ADJ_TIMECONST;
	t.constant = 5;
	RET("constant", adjtimex(&t));
	show("constant5", &t);
	t.modes = ADJ_TIMECONST;
	t.constant = 20;
	RET("constant.big", adjtimex(&t));
	show("constant20", &t);
	t.modes = ADJ_TICK;
	t.tick = 10001;
	RET("tick", adjtimex(&t));
	show("tick", &t);
	t.modes = ADJ_TICK;
	t.tick = 8999;
	RET("tick.low", adjtimex(&t));
	t.tick = 11001;
	RET("tick.high", adjtimex(&t));
	t.modes = ADJ_FREQUENCY;
	t.freq = 100 << 16;
	RET("freq", adjtimex(&t));
	SHOW("freq.back", "%ld", t.freq);
	t.modes = ADJ_FREQUENCY;
	t.freq = 1000L << 16;
	RET("freq.clamped", adjtimex(&t));
	SHOW("freq.clamped.back", "%ld", t.freq);
	t.modes = ADJ_FREQUENCY;
	t.freq = 0x7fffffffffffffffL;
	RET("freq.overflow", adjtimex(&t));
	t.modes = ADJ_MAXERROR | ADJ_ESTERROR;
	t.maxerror = 0;
	t.esterror = 20000000;
	RET("errors", adjtimex(&t));
	SHOW("esterror.back", "%ld", t.esterror);
	t.modes = ADJ_STATUS;
	t.status = STA_UNSYNC;
	RET("unsync", adjtimex(&t));
	t.modes = 0x8000;
	RET("adjtime.nosingle", adjtimex(&t));
	t.modes = ADJ_OFFSET_SS_READ;
	RET("adjtime.read", adjtimex(&t));
	SHOW("adjtime.read.offset", "%ld", t.offset);
	t.modes = ADJ_SETOFFSET;
	t.time.tv_sec = 0;
	t.time.tv_usec = 1000000;
	RET("setoffset.bad", adjtimex(&t));
	t.time.tv_usec = -1;
	RET("setoffset.neg", adjtimex(&t));
	RET("bad", syscall(SYS_adjtimex, BAD));
	memset(&t, 0, sizeof t);
	RET("clock.realtime", clock_adjtime(CLOCK_REALTIME, &t));
	RET("clock.monotonic", clock_adjtime(CLOCK_MONOTONIC, &t));
	RET("clock.unknown", clock_adjtime(99, &t));

	pid_t c = fork();
	if (c == 0) {
		setuid(65534);
		memset(&t, 0, sizeof t);
		RET("user.read", adjtimex(&t));
		t.modes = ADJ_STATUS;
		RET("user.set", adjtimex(&t));
		t.modes = ADJ_OFFSET_SS_READ;
		RET("user.adjtime.read", adjtimex(&t));
		t.modes = ADJ_OFFSET_SINGLESHOT;
		RET("user.adjtime", adjtimex(&t));
		t.modes = ADJ_TICK;
		t.tick = 1;
		RET("user.badtick", adjtimex(&t));
		fflush(stdout);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	return 0;
}
