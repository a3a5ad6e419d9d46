/* Setting the wall clock: clock_settime and settimeofday, their errors
 * and who may call them, and that the clock read through the vDSO
 * (glibc's clock_gettime) and through the system call both move. Linux
 * is the oracle: under qemu-user the host's clock would be set. */
#include "../../conform/conform.h"
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static double now_vdso(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_syscall(void) {
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double before = now_vdso();
	ts.tv_sec += 1000;
	RET("settime.forward", clock_settime(CLOCK_REALTIME, &ts));
	double d = now_vdso() - before;
	SHOW("vdso.moved", "%d", d >= 1000 && d < 1001);
	d = now_syscall() - before;
	SHOW("syscall.moved", "%d", d >= 1000 && d < 1001);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	SHOW("gettimeofday.moved", "%d", tv.tv_sec + tv.tv_usec / 1e6 - before >= 1000);
	double mono0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono0 = ts.tv_sec + ts.tv_nsec / 1e9;
	tv.tv_sec -= 1000;
	RET("settimeofday.back", settimeofday(&tv, NULL));
	d = now_vdso() - before;
	SHOW("back", "%d", d >= 0 && d < 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	SHOW("monotonic.unmoved", "%d", ts.tv_sec + ts.tv_nsec / 1e9 - mono0 < 1);

	/* an absolute sleep on the real-time clock follows the new time */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50 * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	RET("sleep.abs", clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL));
	SHOW("sleep.abs.after", "%d", now_vdso() >= ts.tv_sec + ts.tv_nsec / 1e9);

	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	RET("settime.negsec", clock_settime(CLOCK_REALTIME, &ts));
	ts.tv_sec = 0;
	ts.tv_nsec = -1;
	RET("settime.negnsec", clock_settime(CLOCK_REALTIME, &ts));
	ts.tv_nsec = 1000000000;
	RET("settime.bignsec", clock_settime(CLOCK_REALTIME, &ts));
	ts.tv_sec = 9000000000L;
	ts.tv_nsec = 0;
	RET("settime.far", clock_settime(CLOCK_REALTIME, &ts));
	RET("settime.bad", syscall(SYS_clock_settime, CLOCK_REALTIME, BAD));
	RET("settime.monotonic", clock_settime(CLOCK_MONOTONIC, &ts));
	RET("settime.boottime", clock_settime(CLOCK_BOOTTIME, &ts));
	RET("settime.cputime", clock_settime(CLOCK_PROCESS_CPUTIME_ID, &ts));
	RET("settime.coarse", clock_settime(CLOCK_REALTIME_COARSE, &ts));
	RET("settime.unknown", clock_settime(16, &ts));
	tv.tv_usec = 1000001;
	RET("settimeofday.bigusec", settimeofday(&tv, NULL));
	RET("settimeofday.bad", syscall(SYS_settimeofday, BAD, NULL));
	struct timezone tz = {60, 0};
	RET("settimeofday.tz", settimeofday(NULL, &tz));
	struct timezone got = {0, 0};
	gettimeofday(&tv, &got);
	SHOW("timezone", "%d %d", got.tz_minuteswest, got.tz_dsttime);
	tz.tz_minuteswest = 16 * 60;
	RET("settimeofday.badtz", settimeofday(NULL, &tz));
	tz.tz_minuteswest = 0;
	settimeofday(NULL, &tz);

	pid_t c = fork();
	if (c == 0) {
		setuid(65534);
		clock_gettime(CLOCK_REALTIME, &ts);
		RET("user.settime", clock_settime(CLOCK_REALTIME, &ts));
		ts.tv_sec = -1;
		RET("user.settime.neg", clock_settime(CLOCK_REALTIME, &ts));
		gettimeofday(&tv, NULL);
		RET("user.settimeofday", settimeofday(&tv, NULL));
		fflush(stdout);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	return 0;
}
