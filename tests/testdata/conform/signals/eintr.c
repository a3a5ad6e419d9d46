/* Blocking calls interrupted by a signal whose handler has no SA_RESTART
 * fail with EINTR: reads and writes of eventfds, pipes and Unix sockets
 * that would block, accept, epoll_wait, poll and a futex wait (the
 * resource fuzzer's main thread relies on it to bound its programs). */
#include "../conform.h"
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>

static volatile int alarms;

static void on_alarm(int sig) {
	(void)sig;
	alarms++;
}

/* after_ms arms ITIMER_REAL once. */
static void after_ms(int ms) {
	struct itimerval it = {{0, 0}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

#define INTERRUPTED(name, call)                                                                              \
	do {                                                                                                 \
		alarms = 0;                                                                                  \
		after_ms(20);                                                                                \
		RET(name, call);                                                                             \
		SHOW(name ".alarms", "%d", alarms);                                                          \
	} while (0)

static char buf[1 << 16];

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);

	int e = eventfd(0, 0);
	uint64_t v = 0;
	INTERRUPTED("eventfd.read", read(e, &v, 8));
	v = UINT64_MAX - 1;
	RET("eventfd.fill", write(e, &v, 8));
	v = 1;
	INTERRUPTED("eventfd.write", write(e, &v, 8));

	int p[2];
	pipe(p);
	INTERRUPTED("pipe.read", read(p[0], buf, 1));
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	while (write(p[1], buf, sizeof buf) > 0)
		;
	fcntl(p[1], F_SETFL, 0);
	INTERRUPTED("pipe.write", write(p[1], buf, 1));

	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	INTERRUPTED("unix.read", read(s[0], buf, 1));
	while (send(s[1], buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
	INTERRUPTED("unix.write", write(s[1], buf, sizeof buf));

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(l, (struct sockaddr *)&a, sizeof a);
	listen(l, 1);
	INTERRUPTED("accept", accept(l, NULL, NULL));

	int ep = epoll_create1(0);
	struct epoll_event ev;
	INTERRUPTED("epoll_wait", epoll_wait(ep, &ev, 1, -1));
	int q[2];
	pipe(q);
	struct pollfd pf = {q[0], POLLIN, 0};
	INTERRUPTED("poll", poll(&pf, 1, -1));
	static uint32_t word;
	INTERRUPTED("futex.wait", syscall(SYS_futex, &word, FUTEX_WAIT, 0, NULL, NULL, 0));
	return 0;
}
