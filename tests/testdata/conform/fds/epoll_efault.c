/* An edge-triggered event survives an epoll_wait whose events buffer
 * faults: Linux puts the item back on the ready list (ep_send_events), so
 * the next wait reports it, and the one after has nothing new. */
#include "../conform.h"
#include <sys/epoll.h>

int main(void) {
	int p[2];
	pipe(p);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 7};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	write(p[1], "x", 1);
	RET("epoll_wait into a bad buffer", epoll_wait(ep, BAD, 4, 0));
	struct epoll_event got[4] = {0};
	RET("epoll_wait after it", epoll_wait(ep, got, 4, 0));
	SHOW("its data", "%llu", (unsigned long long)got[0].data.u64);
	RET("epoll_wait again", epoll_wait(ep, got, 4, 0));
	ev.events = EPOLLIN | EPOLLONESHOT;
	epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
	RET("one-shot into a bad buffer", epoll_wait(ep, BAD, 4, 0));
	RET("one-shot after it", epoll_wait(ep, got, 4, 0));
	RET("one-shot again", epoll_wait(ep, got, 4, 0));
	return 0;
}
