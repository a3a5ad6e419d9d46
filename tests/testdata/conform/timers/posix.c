/* POSIX per-process timers (timer_create and its calls), as LTP's
 * timer_* tests and glibc use them: errors, SIGEV_SIGNAL, SIGEV_NONE,
 * SIGEV_THREAD_ID and glibc's SIGEV_THREAD, si_code SI_TIMER with
 * si_value and si_overrun, overruns of a blocked periodic timer and their
 * cap, TIMER_ABSTIME, the CPU-time clocks, a deleted timer's pending
 * signal, fork and exec. qemu-user renumbers timers, so ids and si_timerid
 * are not printed; times are checked as ranges.
 * needs: binfmt (it execs itself) */
#include "../conform.h"
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

typedef int ktimer_t; /* the kernel's timer_t */

static long kcreate(clockid_t clock, struct sigevent *ev, ktimer_t *id) {
	return syscall(SYS_timer_create, clock, ev, id);
}
static long kset(ktimer_t id, int flags, const struct itimerspec *v, struct itimerspec *old) {
	return syscall(SYS_timer_settime, id, flags, v, old);
}
static long kget(ktimer_t id, struct itimerspec *v) { return syscall(SYS_timer_gettime, id, v); }
static long koverrun(ktimer_t id) { return syscall(SYS_timer_getoverrun, id); }
static long kdelete(ktimer_t id) { return syscall(SYS_timer_delete, id); }

static struct sigevent event(int notify, int sig, long value) {
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = notify;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_ptr = (void *)value;
	return ev;
}

static struct itimerspec spec_ms(long value_ms, long interval_ms) {
	struct itimerspec s = {{interval_ms / 1000, interval_ms % 1000 * 1000000},
	                       {value_ms / 1000, value_ms % 1000 * 1000000}};
	return s;
}

static long ns(struct timespec t) { return t.tv_sec * 1000000000L + t.tv_nsec; }

/* wait_signal takes sig, blocked, within two seconds. */
static int wait_signal(int sig, siginfo_t *si) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	struct timespec limit = {2, 0};
	memset(si, 0, sizeof *si);
	return sigtimedwait(&set, si, &limit);
}

static void block(int sig) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void errors(void) {
	struct sigevent ev = event(SIGEV_SIGNAL, SIGUSR1, 0);
	ktimer_t id;
	RET("create.badclock", kcreate(16, &ev, &id));
	RET("create.monotonic_raw", kcreate(CLOCK_MONOTONIC_RAW, &ev, &id));
	RET("create.coarse", kcreate(CLOCK_REALTIME_COARSE, &ev, &id));
	RET("create.badevent", kcreate(CLOCK_REALTIME, BAD, &id));
	RET("create.badid", kcreate(CLOCK_REALTIME, &ev, BAD));
	struct sigevent bad = event(12345, SIGUSR1, 0);
	RET("create.badnotify", kcreate(CLOCK_REALTIME, &bad, &id));
	bad = event(SIGEV_SIGNAL | 12345, SIGUSR1, 0);
	RET("create.badnotify.bits", kcreate(CLOCK_REALTIME, &bad, &id));
	bad = event(SIGEV_SIGNAL, 0, 0);
	RET("create.signo0", kcreate(CLOCK_REALTIME, &bad, &id));
	bad = event(SIGEV_SIGNAL, 65, 0);
	RET("create.signo65", kcreate(CLOCK_REALTIME, &bad, &id));
	bad = event(SIGEV_NONE, 0, 0);
	RET("create.none.signo0", kcreate(CLOCK_REALTIME, &bad, &id));
	kdelete(id);
	bad = event(SIGEV_THREAD_ID, SIGUSR1, 0);
	bad._sigev_un._tid = 999999;
	RET("create.threadid.nosuch", kcreate(CLOCK_REALTIME, &bad, &id));
	bad._sigev_un._tid = getppid();
	RET("create.threadid.other", kcreate(CLOCK_REALTIME, &bad, &id));

	struct itimerspec s = spec_ms(100, 0), old;
	RET("settime.badid", kset(-1, 0, &s, NULL));
	RET("gettime.badid", kget(-1, &s));
	RET("getoverrun.badid", koverrun(-1));
	RET("delete.badid", kdelete(-1));
	RET("create", kcreate(CLOCK_MONOTONIC, &ev, &id));
	RET("settime.null", kset(id, 0, NULL, NULL));
	RET("settime.bad", kset(id, 0, BAD, NULL));
	s.it_value.tv_nsec = -1;
	RET("settime.negnsec", kset(id, 0, &s, NULL));
	s.it_value.tv_nsec = 1000000000;
	RET("settime.bignsec", kset(id, 0, &s, NULL));
	s = spec_ms(100, 0);
	s.it_interval.tv_sec = -1;
	RET("settime.neginterval", kset(id, 0, &s, NULL));
	s = spec_ms(5000, 0);
	RET("settime.badold", kset(id, 0, &s, BAD));
	RET("gettime.after.badold", kget(id, &old));
	SHOW("armed.after.badold", "%d", old.it_value.tv_sec >= 4);
	RET("gettime.bad", kget(id, BAD));
	RET("delete", kdelete(id));
	RET("delete.again", kdelete(id));
	RET("gettime.deleted", kget(id, &old));
	RET("getoverrun.deleted", koverrun(id));
}

static void clocks(void) {
	static const clockid_t list[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
	                                 CLOCK_THREAD_CPUTIME_ID, CLOCK_BOOTTIME, CLOCK_TAI};
	for (unsigned i = 0; i < sizeof list / sizeof *list; i++) {
		char name[64];
		ktimer_t id;
		snprintf(name, sizeof name, "clock.%d.create", (int)list[i]);
		RET(name, kcreate(list[i], NULL, &id));
		struct itimerspec s;
		snprintf(name, sizeof name, "clock.%d.gettime", (int)list[i]);
		RET(name, kget(id, &s));
		snprintf(name, sizeof name, "clock.%d.disarmed", (int)list[i]);
		SHOW(name, "%ld %ld %ld %ld", (long)s.it_value.tv_sec, s.it_value.tv_nsec, (long)s.it_interval.tv_sec,
		     s.it_interval.tv_nsec);
		snprintf(name, sizeof name, "clock.%d.getoverrun", (int)list[i]);
		RET(name, koverrun(id));
		kdelete(id);
	}
}

/* oneshot: a 50 ms timer's signal, its siginfo, and the old setting. */
static void oneshot(void) {
	block(SIGUSR1);
	struct sigevent ev = event(SIGEV_SIGNAL, SIGUSR1, 0x1234);
	ktimer_t id;
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	struct itimerspec s = spec_ms(50, 0), old, cur;
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	RET("oneshot.settime", kset(id, 0, &s, &old));
	SHOW("oneshot.old", "%ld %ld", (long)old.it_value.tv_sec, old.it_value.tv_nsec);
	kget(id, &cur);
	SHOW("oneshot.pending", "%d %ld", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
	     cur.it_value.tv_nsec <= 50000000, cur.it_interval.tv_nsec);
	siginfo_t si;
	RET("oneshot.wait", wait_signal(SIGUSR1, &si));
	clock_gettime(CLOCK_MONOTONIC, &end);
	SHOW("oneshot.waited", "%d", ns(end) - ns(start) >= 50000000);
	SHOW("oneshot.si", "code %d value %#lx overrun %d", si.si_code, (long)si.si_value.sival_ptr, si.si_overrun);
	kget(id, &cur);
	SHOW("oneshot.expired", "%ld %ld", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
	RET("oneshot.getoverrun", koverrun(id));

	/* Re-arming returns the time left and the interval. */
	s = spec_ms(3000, 2000);
	kset(id, 0, &s, NULL);
	s = spec_ms(0, 0);
	RET("rearm.disarm", kset(id, 0, &s, &old));
	SHOW("rearm.old", "%d %ld", old.it_value.tv_sec == 2 || old.it_value.tv_sec == 3, (long)old.it_interval.tv_sec);
	kget(id, &cur);
	SHOW("rearm.disarmed", "%ld %ld %ld", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec, (long)cur.it_interval.tv_sec);
	/* A zero value disarms whatever the interval. */
	s = spec_ms(0, 100);
	kset(id, 0, &s, NULL);
	kget(id, &cur);
	SHOW("rearm.zero.value", "%ld %ld", (long)cur.it_value.tv_sec, cur.it_interval.tv_nsec);
	kdelete(id);
}

/* periodic: a blocked 2 ms timer sends one signal whose si_overrun counts
 * the periods missed; timer_getoverrun agrees; delivery rearms it. */
static void periodic(void) {
	block(SIGUSR2);
	struct sigevent ev = event(SIGEV_SIGNAL, SIGUSR2, 7);
	ktimer_t id;
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	struct itimerspec s = spec_ms(2, 2), cur;
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	kset(id, 0, &s, NULL);
	struct timespec nap = {0, 100000000};
	nanosleep(&nap, NULL);
	sigset_t pending;
	sigpending(&pending);
	SHOW("periodic.pending", "%d", sigismember(&pending, SIGUSR2));
	kget(id, &cur);
	SHOW("periodic.gettime.while.pending", "%d %ld", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
	     cur.it_value.tv_nsec <= 2000000, cur.it_interval.tv_nsec);
	siginfo_t si;
	RET("periodic.wait", wait_signal(SIGUSR2, &si));
	clock_gettime(CLOCK_MONOTONIC, &end);
	SHOW("periodic.si", "code %d value %ld", si.si_code, (long)si.si_value.sival_ptr);
	/* one period for the signal, the others missed while it was blocked */
	long periods = (ns(end) - ns(start)) / 2000000;
	SHOW("periodic.overrun.range", "%d", si.si_overrun >= 45 && si.si_overrun <= periods);
	SHOW("periodic.getoverrun.same", "%d", koverrun(id) == si.si_overrun);
	RET("periodic.wait.again", wait_signal(SIGUSR2, &si));
	SHOW("periodic.overrun.again.small", "%d", si.si_overrun < 20);
	kdelete(id);

	/* timer_settime03: an absolute expiry 3 s ago with a 1 ns period:
	 * the overrun is capped at INT_MAX. */
	kcreate(CLOCK_REALTIME, &ev, &id);
	struct itimerspec past = {{0, 1}, {0, 0}};
	clock_gettime(CLOCK_REALTIME, &past.it_value);
	past.it_value.tv_sec -= 3;
	RET("capped.settime", kset(id, TIMER_ABSTIME, &past, NULL));
	RET("capped.wait", wait_signal(SIGUSR2, &si));
	SHOW("capped.overrun", "%d", si.si_overrun == INT_MAX);
	SHOW("capped.getoverrun", "%d", koverrun(id) == INT_MAX);
	s = spec_ms(0, 0);
	kset(id, 0, &s, NULL);
	RET("capped.getoverrun.reset", koverrun(id));
	kdelete(id);
	/* The 1 ns period fired again after the delivery: drop that. */
	struct timespec zero = {0, 0};
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	while (sigtimedwait(&usr2, &si, &zero) > 0)
		;

	/* The pending signal of a timer set again or deleted still shows in
	 * sigpending but is dropped when taken (Linux 6.13 on); a new expiry
	 * sends it again. */
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	s = spec_ms(1, 0);
	kset(id, 0, &s, NULL);
	nanosleep(&nap, NULL);
	struct itimerspec later = spec_ms(10000, 0);
	RET("stale.settime", kset(id, 0, &later, NULL));
	sigpending(&pending);
	SHOW("stale.pending", "%d", sigismember(&pending, SIGUSR2));
	RET("stale.take", sigtimedwait(&usr2, &si, &zero));
	sigpending(&pending);
	SHOW("stale.pending.after", "%d", sigismember(&pending, SIGUSR2));
	kset(id, 0, &s, NULL);
	nanosleep(&nap, NULL);
	kset(id, 0, &later, NULL);
	kset(id, 0, &s, NULL);
	nanosleep(&nap, NULL);
	RET("stale.sent.again", sigtimedwait(&usr2, &si, &zero));
	SHOW("stale.si", "code %d value %ld overrun %d", si.si_code, (long)si.si_value.sival_ptr, si.si_overrun);
	kset(id, 0, &s, NULL);
	nanosleep(&nap, NULL);
	RET("deleted.delete", kdelete(id));
	sigpending(&pending);
	SHOW("deleted.pending", "%d", sigismember(&pending, SIGUSR2));
	RET("deleted.take", sigtimedwait(&usr2, &si, &zero));
}

/* absolute: TIMER_ABSTIME on the wall and monotonic clocks. */
static void absolute(void) {
	static const clockid_t list[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME};
	for (unsigned i = 0; i < 3; i++) {
		struct sigevent ev = event(SIGEV_SIGNAL, SIGUSR1, i);
		ktimer_t id;
		kcreate(list[i], &ev, &id);
		struct itimerspec s = {{0, 0}, deadline_ms(list[i], 60)}, cur;
		kset(id, TIMER_ABSTIME, &s, NULL);
		kget(id, &cur);
		char name[64];
		snprintf(name, sizeof name, "abs.%d.left", (int)list[i]);
		SHOW(name, "%d", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 60000000);
		siginfo_t si;
		snprintf(name, sizeof name, "abs.%d.wait", (int)list[i]);
		RET(name, wait_signal(SIGUSR1, &si));
		struct timespec now;
		clock_gettime(list[i], &now);
		snprintf(name, sizeof name, "abs.%d.not.early", (int)list[i]);
		SHOW(name, "%d", ns(now) >= ns(s.it_value));
		kdelete(id);
	}
}

/* none: a SIGEV_NONE timer sends nothing and counts down. */
static void none(void) {
	struct sigevent ev = event(SIGEV_NONE, SIGUSR1, 0);
	ktimer_t id;
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	struct itimerspec s = spec_ms(30, 0), cur;
	kset(id, 0, &s, NULL);
	kget(id, &cur);
	SHOW("none.left", "%d", cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 30000000);
	struct timespec nap = {0, 60000000};
	nanosleep(&nap, NULL);
	kget(id, &cur);
	SHOW("none.expired", "%ld %ld", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
	sigset_t pending;
	sigpending(&pending);
	SHOW("none.nothing.pending", "%d", sigismember(&pending, SIGUSR1));
	s = spec_ms(10, 10);
	kset(id, 0, &s, NULL);
	nanosleep(&nap, NULL);
	kget(id, &cur);
	SHOW("none.periodic", "%d %ld", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
	     cur.it_value.tv_nsec <= 10000000, cur.it_interval.tv_nsec);
	RET("none.getoverrun", koverrun(id));
	kdelete(id);
}

/* A periodic timer whose signal is ignored goes on. */
static void ignored(void) {
	signal(SIGWINCH, SIG_IGN);
	struct sigevent ev = event(SIGEV_SIGNAL, SIGWINCH, 0);
	ktimer_t id;
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	struct itimerspec s = spec_ms(5, 20), cur;
	kset(id, 0, &s, NULL);
	struct timespec nap = {0, 50000000};
	nanosleep(&nap, NULL);
	kget(id, &cur);
	SHOW("ignored.still.armed", "%d", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 20000000);
	kdelete(id);
}

static volatile pid_t waiter_tid, got_tid;

static void *waiter(void *arg) {
	(void)arg;
	siginfo_t si;
	waiter_tid = syscall(SYS_gettid);
	if (wait_signal(SIGRTMIN + 2, &si) > 0)
		got_tid = syscall(SYS_gettid);
	return NULL;
}

/* SIGEV_THREAD_ID sends to that thread (pending on it while it has the
 * signal blocked); glibc's SIGEV_THREAD calls the function in a thread
 * with the value. */
static volatile int thread_calls;
static volatile long thread_value;

static void notified(union sigval v) {
	thread_value = (long)v.sival_ptr;
	thread_calls++;
}

static void threads(void) {
	block(SIGRTMIN + 2);
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	while (!waiter_tid)
		sched_yield();
	pid_t tid = waiter_tid;
	struct sigevent ev = event(SIGEV_THREAD_ID, SIGRTMIN + 2, 0);
	ev._sigev_un._tid = tid;
	ktimer_t id;
	RET("threadid.create", kcreate(CLOCK_MONOTONIC, &ev, &id));
	struct itimerspec s = spec_ms(20, 0);
	kset(id, 0, &s, NULL);
	pthread_join(th, NULL);
	SHOW("threadid.to.thread", "%d", got_tid == tid);
	kdelete(id);

	timer_t gt;
	struct sigevent tev;
	memset(&tev, 0, sizeof tev);
	tev.sigev_notify = SIGEV_THREAD;
	tev.sigev_notify_function = notified;
	tev.sigev_value.sival_ptr = (void *)0x5678;
	RET("thread.create", timer_create(CLOCK_MONOTONIC, &tev, &gt));
	s = spec_ms(10, 0);
	RET("thread.settime", timer_settime(gt, 0, &s, NULL));
	for (int i = 0; i < 200 && !thread_calls; i++) {
		struct timespec nap = {0, 10000000};
		nanosleep(&nap, NULL);
	}
	SHOW("thread.called", "%d %#lx", thread_calls, thread_value);
	RET("thread.delete", timer_delete(gt));
}

static volatile int cpu_signals;

static void cpu_handler(int sig) {
	(void)sig;
	cpu_signals++;
}

/* CPU-time clocks: the signal comes once the process or thread has run
 * the time, not before; a sleep does not count. */
static void cputime(void) {
	signal(SIGALRM, cpu_handler);
	static const clockid_t list[] = {CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
	for (int i = 0; i < 2; i++) {
		ktimer_t id;
		kcreate(list[i], NULL, &id);
		struct timespec start;
		clock_gettime(list[i], &start);
		struct itimerspec s = spec_ms(50, 0), cur;
		char name[64];
		snprintf(name, sizeof name, "cpu.%d.settime", (int)list[i]);
		RET(name, kset(id, 0, &s, NULL));
		kget(id, &cur);
		snprintf(name, sizeof name, "cpu.%d.left", (int)list[i]);
		SHOW(name, "%d", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 50000000);
		cpu_signals = 0;
		struct timespec nap = {0, 100000000};
		nanosleep(&nap, NULL);
		snprintf(name, sizeof name, "cpu.%d.not.while.asleep", (int)list[i]);
		SHOW(name, "%d", cpu_signals);
		struct timespec wall, now;
		clock_gettime(CLOCK_MONOTONIC, &wall);
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while (!cpu_signals && ns(now) - ns(wall) < 5000000000L);
		clock_gettime(list[i], &now);
		snprintf(name, sizeof name, "cpu.%d.fired", (int)list[i]);
		SHOW(name, "%d not early %d", cpu_signals, ns(now) - ns(start) >= 50000000);
		/* Absolute, and already due: fires at once. */
		cpu_signals = 0;
		struct itimerspec due = {{0, 0}, {0, 1}};
		kset(id, TIMER_ABSTIME, &due, NULL);
		clock_gettime(CLOCK_MONOTONIC, &wall);
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while (!cpu_signals && ns(now) - ns(wall) < 5000000000L);
		snprintf(name, sizeof name, "cpu.%d.due", (int)list[i]);
		SHOW(name, "%d", cpu_signals);
		kdelete(id);
	}
	signal(SIGALRM, SIG_DFL);
}

/* fork: the child has none of the parent's timers; exec ends them. */
static void inheritance(const char *self) {
	struct sigevent ev = event(SIGEV_SIGNAL, SIGUSR1, 0);
	ktimer_t id;
	kcreate(CLOCK_MONOTONIC, &ev, &id);
	struct itimerspec s = spec_ms(10000, 0), cur;
	kset(id, 0, &s, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		RET("fork.child.gettime", kget(id, &cur));
		RET("fork.child.delete", kdelete(id));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	RET("fork.parent.gettime", kget(id, &cur));
	pid = fork();
	if (pid == 0) {
		kcreate(CLOCK_MONOTONIC, &ev, &id);
		kset(id, 0, &s, NULL);
		char arg[32];
		snprintf(arg, sizeof arg, "%d", id);
		execl(self, self, "exec", arg, (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("exec.status", "%d", WEXITSTATUS(status));
	kdelete(id);
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "exec") == 0) {
		struct itimerspec cur;
		RET("exec.gettime", kget(atoi(argv[2]), &cur));
		return 3;
	}
	errors();
	clocks();
	oneshot();
	periodic();
	absolute();
	none();
	ignored();
	threads();
	cputime();
	inheritance("/proc/self/exe");
	return 0;
}
