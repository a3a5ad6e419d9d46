/* EPOLLEXCLUSIVE: two processes, each with its own epoll instance watching
 * one listening socket and blocked in epoll_wait; one connection wakes one
 * of them (nginx's workers), where without the flag it wakes both. */
#include "../conform.h"
#include "listen.h"
#include <sys/epoll.h>
#include <sys/wait.h>

/* woken runs two waiters on ls with the given epoll flags, connects once,
 * and returns how many waiters saw the connection within a second. */
static int woken(int ls, struct sockaddr_in *a, unsigned flags) {
	int p[2];
	pipe(p);
	for (int i = 0; i < 2; i++) {
		if (fork() == 0) {
			int ep = epoll_create1(0);
			struct epoll_event ev = {.events = EPOLLIN | flags};
			epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
			int n = epoll_wait(ep, &ev, 1, 1000);
			write(p[1], n > 0 ? "w" : "t", 1);
			_exit(0);
		}
	}
	usleep(300000); /* both are waiting */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)a, sizeof *a);
	while (wait(NULL) > 0)
		;
	char r[2];
	read(p[0], r, 2);
	close(p[0]);
	close(p[1]);
	int a2 = accept(ls, NULL, NULL); /* take it, for the next round */
	close(a2);
	close(c);
	return (r[0] == 'w') + (r[1] == 'w');
}

int main(void) {
	struct sockaddr_in a;
	int ls = listenLoopback(&a, 8);
	SHOW("woken without EPOLLEXCLUSIVE", "%d", woken(ls, &a, 0));
	SHOW("woken with EPOLLEXCLUSIVE", "%d", woken(ls, &a, EPOLLEXCLUSIVE));
	return 0;
}
