/* Edge-triggered epoll on both ends of a one-page pipe, as LTP's
 * epoll_wait06: a read wakes no reader (half a page read: no new event
 * for either end), the writer hears when the full pipe frees its page,
 * the reader when data comes or the writer closes. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/epoll.h>

static int ep, fds[2];

static void wait_events(const char *name) {
	struct epoll_event ev[2];
	int n = epoll_wait(ep, ev, 2, 0);
	printf("%s: %d", name, n);
	for (int i = 0; i < n; i++)
		printf(" [%s %#x]", ev[i].data.fd == fds[0] ? "read-end" : "write-end", ev[i].events);
	printf("\n");
	fflush(stdout);
}

int main(void) {
	char buf[4096] = {0};
	pipe2(fds, O_NONBLOCK);
	RET("setpipe", fcntl(fds[1], F_SETPIPE_SZ, 4096));
	ep = epoll_create1(0);
	struct epoll_event in = {.events = EPOLLIN | EPOLLET, .data.fd = fds[0]};
	struct epoll_event out = {.events = EPOLLOUT | EPOLLET, .data.fd = fds[1]};
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &in);
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[1], &out);
	wait_events("added");
	wait_events("again");
	RET("write.full", write(fds[1], buf, sizeof buf));
	RET("write.more", write(fds[1], buf, 1));
	wait_events("after-write");
	RET("read.half", read(fds[0], buf, 2048));
	wait_events("after-half");
	RET("read.rest", read(fds[0], buf, 2048));
	wait_events("after-rest");
	RET("write.small", write(fds[1], buf, 10));
	wait_events("after-small");
	RET("write.small2", write(fds[1], buf, 10));
	wait_events("after-small2");
	RET("read.some", read(fds[0], buf, 5));
	wait_events("after-read-some");
	close(fds[1]);
	wait_events("after-close-writer");
	return 0;
}
