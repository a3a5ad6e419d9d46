/* epoll instances inside epoll instances: Linux refuses a watch that
 * would close a loop (ELOOP) or make a chain of instances deeper than
 * EP_MAX_NESTS (4) below the top one, so that waking and polling never
 * recurse without bound; nested instances still pass readiness up. */
#include "../conform.h"
#include <sys/epoll.h>

static int add(int ep, int fd) {
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int del(int ep, int fd) { return epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); }

#define N 8

int main(void) {
	int p[2];
	if (pipe(p) != 0)
		return 1;
	int a = epoll_create1(0), b = epoll_create1(0), c = epoll_create1(0);

	RET("add self", add(a, a));
	RET("add b to a", add(a, b));
	RET("add a to b (loop)", add(b, a));
	RET("add c to b", add(b, c));
	RET("add a to c (loop of three)", add(c, a));
	RET("add pipe to c", add(c, p[0]));
	RET("del b from a", del(a, b));
	RET("add a to b after del", add(b, a));
	RET("add b to a (loop again)", add(a, b));

	/* A chain built upwards: e[i] watches e[i-1], e[0] the pipe. */
	int e[N];
	e[0] = epoll_create1(0);
	RET("up: add pipe to e0", add(e[0], p[0]));
	for (int i = 1; i < N; i++) {
		e[i] = epoll_create1(0);
		char name[64];
		snprintf(name, sizeof name, "up: add e%d to e%d", i - 1, i);
		RET(name, add(e[i], e[i - 1]));
	}

	/* A chain built downwards: f[i] watches f[i+1], the deepest added last. */
	int f[N];
	for (int i = 0; i < N; i++)
		f[i] = epoll_create1(0);
	for (int i = 0; i + 1 < N; i++) {
		char name[64];
		snprintf(name, sizeof name, "down: add f%d to f%d", i + 1, i);
		RET(name, add(f[i], f[i + 1]));
	}

	/* A chain joined in the middle: two chains of three joined. */
	int g[6];
	for (int i = 0; i < 6; i++)
		g[i] = epoll_create1(0);
	RET("join: g1 to g0", add(g[0], g[1]));
	RET("join: g2 to g1", add(g[1], g[2]));
	RET("join: g4 to g3", add(g[3], g[4]));
	RET("join: g5 to g4", add(g[4], g[5]));
	RET("join: g3 to g2", add(g[2], g[3]));

	/* Readiness passes up a chain of four instances. */
	int h[4];
	h[0] = epoll_create1(0);
	add(h[0], p[0]);
	for (int i = 1; i < 4; i++) {
		h[i] = epoll_create1(0);
		add(h[i], h[i - 1]);
	}
	struct epoll_event ev;
	RET("top of chain before write", epoll_wait(h[3], &ev, 1, 0));
	RET("write pipe", write(p[1], "x", 1));
	RET("top of chain after write", epoll_wait(h[3], &ev, 1, 100));
	SHOW("top reports h2", "%d", ev.data.fd == h[2]);

	/* An instance cannot be watched exclusively. */
	struct epoll_event xev = {.events = EPOLLIN | EPOLLEXCLUSIVE};
	int x = epoll_create1(0), y = epoll_create1(0);
	RET("exclusive watch of an instance", epoll_ctl(x, EPOLL_CTL_ADD, y, &xev));

	/* The loop attempt does not leave a half-made watch behind. */
	RET("a still watches nothing", epoll_wait(a, &ev, 1, 0));
	RET("close b", close(b));
	RET("add a to c now", add(c, a));
	return 0;
}
