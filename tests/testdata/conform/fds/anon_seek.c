/* lseek on the anonymous files that have no position: Linux's
 * noop_llseek answers 0 for eventfd, timerfd, epoll and signalfd, a
 * pipe is ESPIPE. */
#include "../../conform/conform.h"
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

int main(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	int p[2];
	pipe(p);
	int fds[] = {eventfd(0, 0), timerfd_create(CLOCK_MONOTONIC, 0), epoll_create1(0), signalfd(-1, &set, 0), p[0]};
	const char *names[] = {"eventfd", "timerfd", "epoll", "signalfd", "pipe"};
	for (int i = 0; i < 5; i++) {
		char name[64];
		snprintf(name, sizeof name, "%s.set", names[i]);
		RET(name, lseek(fds[i], 10, SEEK_SET));
		snprintf(name, sizeof name, "%s.end", names[i]);
		RET(name, lseek(fds[i], -5, SEEK_END));
		snprintf(name, sizeof name, "%s.bad-whence", names[i]);
		RET(name, lseek(fds[i], 0, 99));
	}
	return 0;
}
