/* The order epoll_wait reports ready items in, as Linux's ready list
 * gives it: a level-triggered item that was reported goes to the back,
 * so waits for fewer events than are ready take turns; an item becomes
 * ready in the order its events came, not the order it was added in;
 * an item that stops being ready leaves the list. */
#include "../conform.h"
#include <sys/epoll.h>

static int ep;

static void wait_show(const char *what, int max) {
	struct epoll_event got[8] = {0};
	int n = epoll_wait(ep, got, max, 0);
	printf("%s: %d:", what, n);
	for (int i = 0; i < n; i++)
		printf(" %llu", (unsigned long long)got[i].data.u64);
	printf("\n");
}

int main(void) {
	int p[4][2];
	ep = epoll_create1(0);
	for (int i = 0; i < 4; i++) {
		pipe(p[i]);
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = i};
		epoll_ctl(ep, EPOLL_CTL_ADD, p[i][0], &ev);
	}
	/* Ready in the order 2, 0, 3. */
	write(p[2][1], "x", 1);
	write(p[0][1], "x", 1);
	write(p[3][1], "x", 1);
	wait_show("all", 8);
	for (int i = 0; i < 5; i++)
		wait_show("one at a time", 1);
	wait_show("two", 2);
	/* 0 is drained; 1 becomes ready. */
	char c;
	read(p[0][0], &c, 1);
	write(p[1][1], "x", 1);
	wait_show("after a drain", 8);
	for (int i = 0; i < 4; i++)
		wait_show("one at a time", 1);
	/* Edge-triggered items beside level-triggered ones. */
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 3};
	epoll_ctl(ep, EPOLL_CTL_MOD, p[3][0], &ev);
	wait_show("after a mod", 8);
	wait_show("again", 8);
	write(p[3][1], "x", 1);
	wait_show("after a write", 1);
	wait_show("next", 8);
	return 0;
}
