/* timerfd: one-shot and periodic timers, absolute times on both clocks,
 * reads, poll and epoll readiness, errors. Timings are checked as ranges
 * wide enough for a loaded machine. */
#include "../conform.h"
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>

static long ms_since(struct timespec *a) {
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

int main(void) {
	uint64_t n = 0;
	RET("create.badclock", timerfd_create(12345, 0));
	RET("create.badflags", timerfd_create(CLOCK_MONOTONIC, 1));
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	SHOW("create", "%d", fd > 2);
	RET("read.short", read(fd, &n, 4));
	struct itimerspec cur;
	RET("gettime.disarmed", timerfd_gettime(fd, &cur));
	SHOW("disarmed", "%ld %ld", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);

	struct itimerspec one = {{0, 0}, {0, 50 * 1000000}};
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	RET("settime.oneshot", timerfd_settime(fd, 0, &one, NULL));
	RET("gettime", timerfd_gettime(fd, &cur));
	SHOW("gettime.pending", "%d", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 50 * 1000000);
	RET("read.blocking", read(fd, &n, 8));
	SHOW("read.count", "%llu", (unsigned long long)n);
	SHOW("read.waited", "%d", ms_since(&start) >= 45);
	int flags = TFD_NONBLOCK;
	int nb = timerfd_create(CLOCK_MONOTONIC, flags);
	RET("read.nonblock.disarmed", read(nb, &n, 8));

	struct itimerspec period = {{0, 20 * 1000000}, {0, 20 * 1000000}};
	RET("settime.periodic", timerfd_settime(nb, 0, &period, NULL));
	struct timespec sl = {0, 130 * 1000000};
	nanosleep(&sl, NULL);
	RET("read.periodic", read(nb, &n, 8));
	SHOW("periodic.count.in.range", "%d", n >= 3 && n <= 8);
	struct itimerspec old;
	struct itimerspec off = {{0, 0}, {0, 0}};
	RET("settime.disarm", timerfd_settime(nb, 0, &off, &old));
	SHOW("old.interval", "%ld %ld", (long)old.it_interval.tv_sec, old.it_interval.tv_nsec);
	RET("read.after.disarm", read(nb, &n, 8));

	/* Absolute, on both clocks. */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct itimerspec abs = {{0, 0}, {now.tv_sec, now.tv_nsec}};
	abs.it_value.tv_nsec += 30 * 1000000;
	if (abs.it_value.tv_nsec >= 1000000000) {
		abs.it_value.tv_sec++;
		abs.it_value.tv_nsec -= 1000000000;
	}
	RET("settime.abs.monotonic", timerfd_settime(fd, TFD_TIMER_ABSTIME, &abs, NULL));
	struct pollfd p = {fd, POLLIN, 0};
	RET("poll.abs", poll(&p, 1, 5000));
	RET("read.abs", read(fd, &n, 8));
	int rt = timerfd_create(CLOCK_REALTIME, 0);
	clock_gettime(CLOCK_REALTIME, &now);
	struct itimerspec past = {{0, 0}, {now.tv_sec - 10, 0}};
	RET("settime.abs.realtime.past", timerfd_settime(rt, TFD_TIMER_ABSTIME, &past, NULL));
	RET("read.past.fires.at.once", read(rt, &n, 8));
	SHOW("past.count", "%llu", (unsigned long long)n);

	/* epoll readiness */
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
	RET("epoll.add", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	RET("settime.for.epoll", timerfd_settime(fd, 0, &one, NULL));
	RET("epoll.wait.none.yet", epoll_wait(ep, &ev, 1, 0));
	RET("epoll.wait", epoll_wait(ep, &ev, 1, 5000));
	SHOW("epoll.data", "%llu", (unsigned long long)ev.data.u64);

	struct itimerspec bad = {{0, 0}, {0, 1000000000}};
	RET("settime.badnsec", timerfd_settime(fd, 0, &bad, NULL));
	RET("settime.badflags", timerfd_settime(fd, 4, &one, NULL));
	RET("settime.notimerfd", timerfd_settime(0, 0, &one, NULL));
	RET("settime.badfd", timerfd_settime(99, 0, &one, NULL));
	RET("gettime.badptr", timerfd_gettime(fd, (struct itimerspec *)BAD));
	RET("write", write(fd, &n, 8));
	return 0;
}
