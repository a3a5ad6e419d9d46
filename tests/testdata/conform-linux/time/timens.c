/* Time namespaces: /proc/PID/timens_offsets (its format, the errors of a
 * write, frozen once a process entered the namespace), unshare(CLONE_NEWTIME)
 * making the namespace for children, and what a process in it reads:
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME moved by the offsets through the
 * system call and the vDSO alike, sysinfo's and /proc/uptime's uptime,
 * and absolute sleeps and timerfds on the moved clocks (LTP's sysinfo03,
 * timerfd04, clock_nanosleep03); execve and setns enter it too. */
#include "../../conform/conform.h"
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

static double now(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double sys_now(clockid_t c) {
	struct timespec ts;
	syscall(SYS_clock_gettime, c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double proc_uptime(void) {
	FILE *f = fopen("/proc/uptime", "r");
	double up = -1;
	if (f) {
		fscanf(f, "%lf", &up);
		fclose(f);
	}
	return up;
}

static void write_offsets(const char *name, const char *text) {
	int fd = open("/proc/self/timens_offsets", O_WRONLY);
	RET(name, write(fd, text, strlen(text)));
	close(fd);
}

static int same_link(const char *a, const char *b) {
	char x[64] = "", y[64] = "";
	readlink(a, x, sizeof x - 1);
	readlink(b, y, sizeof y - 1);
	return strcmp(x, y) == 0 && x[0];
}

/* in_ns checks, in a process in the new namespace, the clocks against
 * the parent's readings taken just before. */
static void in_ns(double mono, double boot, long uptime) {
	SHOW("child.mono.offset", "%d", (int)(now(CLOCK_MONOTONIC) - mono + 0.5));
	SHOW("child.mono.raw.offset", "%d", (int)(sys_now(CLOCK_MONOTONIC_RAW) - mono + 0.5));
	SHOW("child.boot.offset", "%d", (int)(now(CLOCK_BOOTTIME) - boot + 0.5));
	SHOW("child.boot.syscall.offset", "%d", (int)(sys_now(CLOCK_BOOTTIME) - boot + 0.5));
	SHOW("child.mono.syscall.offset", "%d", (int)(sys_now(CLOCK_MONOTONIC) - mono + 0.5));
	struct sysinfo si;
	sysinfo(&si);
	long d = si.uptime - uptime;
	SHOW("child.sysinfo.offset", "%d", d >= 200 && d <= 201);
	double p = proc_uptime();
	SHOW("child.proc_uptime.matches", "%d", p <= si.uptime && p > si.uptime - 2);
	SHOW("child.time.is.for_children", "%d", same_link("/proc/self/ns/time", "/proc/self/ns/time_for_children"));

	/* An absolute sleep 200 ms ahead on the moved clock. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double start = now(CLOCK_MONOTONIC);
	ts.tv_nsec += 200000000;
	if (ts.tv_nsec >= 1000000000)
		ts.tv_sec++, ts.tv_nsec -= 1000000000;
	RET("child.abs.sleep", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL));
	double slept = now(CLOCK_MONOTONIC) - start;
	SHOW("child.abs.sleep.length", "%d", slept >= 0.19 && slept < 2);

	int tfd = timerfd_create(CLOCK_BOOTTIME, 0);
	struct itimerspec its = {0};
	clock_gettime(CLOCK_BOOTTIME, &its.it_value);
	its.it_value.tv_nsec += 200000000;
	if (its.it_value.tv_nsec >= 1000000000)
		its.it_value.tv_sec++, its.it_value.tv_nsec -= 1000000000;
	start = now(CLOCK_BOOTTIME);
	RET("child.timerfd.abs", timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL));
	unsigned long long n = 0;
	read(tfd, &n, sizeof n);
	slept = now(CLOCK_BOOTTIME) - start;
	SHOW("child.timerfd.expired", "%llu %d", n, slept >= 0.19 && slept < 2);

	write_offsets("child.write.entered", "monotonic 5 0");
}

int main(int argc, char **argv) {
	if (argc > 1) {
		/* After execve in the namespace for children. */
		SHOW("exec.time.is.for_children", "%d", same_link("/proc/self/ns/time", "/proc/self/ns/time_for_children"));
		double mono = now(CLOCK_MONOTONIC);
		SHOW("exec.mono.moved", "%d", mono >= 100 && mono < 200);
		return 0;
	}
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("offsets.initial", "/proc/self/timens_offsets");
	SHOW("initial.same", "%d", same_link("/proc/self/ns/time", "/proc/self/ns/time_for_children"));
	write_offsets("write.root.ns", "1 100 0");

	RET("unshare", unshare(CLONE_NEWTIME));
	SHOW("unshare.for_children.differs", "%d", !same_link("/proc/self/ns/time", "/proc/self/ns/time_for_children"));
	write_offsets("write.realtime", "0 100 0");
	write_offsets("write.nsec", "1 100 1000000000");
	write_offsets("write.garbage", "monotonic x 0");
	write_offsets("write.range", "1 -100000 0");
	write_offsets("write.empty.line", "1 1 0\n\n");
	write_offsets("write.mono", "1 100 0");
	write_offsets("write.boot", "boottime 200 0");
	show_file("offsets.set", "/proc/self/timens_offsets");

	struct sysinfo si;
	sysinfo(&si);
	double mono = now(CLOCK_MONOTONIC), boot = now(CLOCK_BOOTTIME);
	SHOW("parent.unmoved", "%d", mono < 100);
	pid_t pid = fork();
	if (pid == 0) {
		in_ns(mono, boot, si.uptime);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	write_offsets("write.frozen", "1 300 0");

	int fd = open("/proc/self/ns/time_for_children", O_RDONLY);
	mono = now(CLOCK_MONOTONIC); /* the first child slept 0.4 s: a rounding away */
	pid = fork();
	if (pid == 0) {
		RET("setns.time", syscall(SYS_setns, fd, CLONE_NEWTIME));
		SHOW("setns.mono.moved", "%d", (int)(now(CLOCK_MONOTONIC) - mono + 0.5));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
	SHOW("exec", "-1 %s", strerrorname_np(errno));
	return 1;
}
