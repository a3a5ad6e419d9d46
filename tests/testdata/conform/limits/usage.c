/* CPU time: getrusage for the process, its waited-for children and the
 * thread, and times(2). Only what is certain is printed: a busy loop
 * takes user time (also on the CPU-time clocks), a child's time counts
 * for its parent once waited for, and never before. */
#include "../conform.h"
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>

static long usec(struct timeval tv) { return tv.tv_sec * 1000000L + tv.tv_usec; }

/* spin runs for about 200 ms of CPU time or more. */
static void spin(void) {
	struct rusage ru;
	do {
		for (volatile long i = 0; i < 1000000; i++)
			;
		getrusage(RUSAGE_THREAD, &ru);
	} while (usec(ru.ru_utime) + usec(ru.ru_stime) < 200000);
}

int main(void) {
	struct rusage self, thread, children;
	RET("getrusage.children.none", getrusage(RUSAGE_CHILDREN, &children));
	SHOW("children.none", "%ld %ld", usec(children.ru_utime), usec(children.ru_stime));
	spin();
	RET("getrusage.self", getrusage(RUSAGE_SELF, &self));
	RET("getrusage.thread", getrusage(RUSAGE_THREAD, &thread));
	SHOW("self.user.busy", "%d", usec(self.ru_utime) >= 100000);
	SHOW("self.system.sane", "%d", usec(self.ru_stime) >= 0 && self.ru_stime.tv_usec < 1000000);
	SHOW("thread.user.busy", "%d", usec(thread.ru_utime) >= 100000);
	struct timespec cpu;
	RET("clock.process.cputime", clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu));
	SHOW("clock.process.busy", "%d", cpu.tv_sec > 0 || cpu.tv_nsec >= 100000000);
	RET("clock.thread.cputime", clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu));
	SHOW("clock.thread.busy", "%d", cpu.tv_sec > 0 || cpu.tv_nsec >= 100000000);
	RET("getrusage.bad.who", getrusage(5, &self));
	RET("getrusage.bad.address", getrusage(RUSAGE_SELF, BAD));

	struct tms before, after;
	clock_t start = times(&before);
	SHOW("times.user.busy", "%d", before.tms_utime >= 10);
	SHOW("times.children.none", "%ld %ld", (long)before.tms_cutime, (long)before.tms_cstime);

	int ready[2];
	pipe(ready);
	pid_t pid = fork();
	if (pid == 0) {
		spin();
		write(ready[1], "s", 1);
		pause();
	}
	char c;
	read(ready[0], &c, 1);
	RET("getrusage.children.unwaited", getrusage(RUSAGE_CHILDREN, &children));
	SHOW("children.unwaited", "%ld", usec(children.ru_utime));
	kill(pid, 9);
	waitpid(pid, NULL, 0);
	RET("getrusage.children.waited", getrusage(RUSAGE_CHILDREN, &children));
	SHOW("children.user.busy", "%d", usec(children.ru_utime) >= 100000);
	clock_t end = times(&after);
	SHOW("times.children.busy", "%d", after.tms_cutime >= 10);
	SHOW("times.clock.moves", "%d", end >= start);
	return 0;
}
