/* Run as /init by tests/vdso_test.go, static and dynamic: glibc's
 * clock_gettime, gettimeofday and time (through the vDSO when the auxiliary
 * vector names one) against the system calls themselves, each library
 * reading taken between two system-call readings or around one. Between the
 * "loop: begin" and "loop: end" lines it reads the clocks only through
 * glibc, so that a syscall trace shows whether they trapped. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

static int64_t us(struct timeval t) { return (int64_t)t.tv_sec * 1000000 + t.tv_usec; }

static void mark(const char *s) {
	fflush(stdout);
	write(1, s, strlen(s));
}

int main(void) {
	int bad = 0;
	printf("vdso: AT_SYSINFO_EHDR %s\n", getauxval(AT_SYSINFO_EHDR) ? "present" : "absent");

	const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME};
	const char *names[] = {"CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME"};
	for (int c = 0; c < 4; c++) {
		int wrong = 0;
		for (int i = 0; i < 200; i++) {
			struct timespec a, b, d;
			syscall(SYS_clock_gettime, clocks[c], &a);
			clock_gettime(clocks[c], &b);
			syscall(SYS_clock_gettime, clocks[c], &d);
			if (ns(a) > ns(b) || ns(b) > ns(d) || b.tv_nsec < 0 || b.tv_nsec >= 1000000000)
				wrong++;
		}
		printf("%s: library between system calls: %s\n", names[c], wrong ? "NO" : "yes");
		bad += wrong;
	}

	int wrong = 0;
	for (int i = 0; i < 200; i++) {
		struct timeval a, b, d;
		struct timezone tz = {1, 1};
		syscall(SYS_gettimeofday, &a, NULL);
		gettimeofday(&b, &tz);
		syscall(SYS_gettimeofday, &d, NULL);
		if (us(a) > us(b) || us(b) > us(d) || b.tv_usec < 0 || b.tv_usec >= 1000000 || tz.tz_minuteswest != 0)
			wrong++;
	}
	printf("gettimeofday: library between system calls, UTC: %s\n", wrong ? "NO" : "yes");
	bad += wrong;

	/* time() may read a coarse clock, up to a tick behind. */
	wrong = 0;
	for (int i = 0; i < 200; i++) {
		struct timespec s;
		time_t a = time(NULL);
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &s);
		time_t t;
		time_t b = time(&t);
		if (a > s.tv_sec || s.tv_sec > b + 1 || t != b)
			wrong++;
	}
	printf("time: agrees with the system call: %s\n", wrong ? "NO" : "yes");
	bad += wrong;

	struct timespec res;
	printf("clock_getres(CLOCK_MONOTONIC): %d, positive: %s\n", clock_getres(CLOCK_MONOTONIC, &res),
	       res.tv_sec == 0 && res.tv_nsec > 0 ? "yes" : "no");

	mark("loop: begin\n");
	struct timespec last = {0, 0}, now;
	wrong = 0;
	for (int i = 0; i < 1000; i++) {
		struct timeval tv;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ns(now) < ns(last))
			wrong++;
		last = now;
		clock_gettime(CLOCK_REALTIME, &now);
		gettimeofday(&tv, NULL);
		if (time(NULL) + 1 < tv.tv_sec)
			wrong++;
	}
	mark("loop: end\n");
	printf("loop: monotonic never went back: %s\n", wrong ? "NO" : "yes");
	bad += wrong;
	return bad ? 1 : 0;
}
