/* Blocking socket calls on sockets that cannot go on (a listener shut
 * down, not listening, unconnected, reset by its peer, shut down for
 * reading, a peer that reads nothing): each returns what Linux returns,
 * or sleeps as on Linux, and none spins. A wait that took an event it had
 * not asked for as its own spun where no signal could end it
 * (tcp_write_peer_shut.c); these are the other ways such a call waits. */
#include "../../conform/conform.h"
#include "../loopback.h"
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

static char buf[1 << 16];

/* in_child runs fn in a child with a 3 s alarm and shows how it ended and
 * whether it spun (half of those 3 s or more on a CPU). */
static void in_child(const char *name, long (*fn)(void)) {
	pid_t p = fork();
	if (p == 0) {
		alarm(3);
		long r = fn();
		printf("%s: %ld %s\n", name, r, r < 0 ? strerror(errno) : "");
		fflush(stdout);
		_exit(0);
	}
	int st;
	struct rusage ru;
	wait4(p, &st, 0, &ru);
	long ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 + ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
	printf("%s.ended: %s spun=%d\n", name, WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exit", ms > 1500);
	fflush(stdout);
}

static long accept_shut_rd(void) {
	struct sockaddr_in a;
	int l = tcp_listen(&a);
	shutdown(l, SHUT_RD);
	return accept(l, NULL, NULL);
}
static long accept_shut_rdwr(void) {
	struct sockaddr_in a;
	int l = tcp_listen(&a);
	shutdown(l, SHUT_RDWR);
	return accept(l, NULL, NULL);
}
static long accept_bound(void) {
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(l, (struct sockaddr *)&a, sizeof a);
	return accept(l, NULL, NULL);
}
static long read_shut_rd(void) {
	int sv[2];
	tcp_pair(sv);
	shutdown(sv[0], SHUT_RD);
	return read(sv[0], buf, 10);
}
static long write_until_full(void) {
	int sv[2];
	tcp_pair(sv);
	shutdown(sv[0], SHUT_RD);
	long r;
	while ((r = write(sv[0], buf, sizeof buf)) > 0)
		;
	return r;
}
static long write_unconnected(void) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	return write(s, buf, 10);
}
static long read_unconnected(void) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	return read(s, buf, 10);
}
static long udp_recv_shut(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(s, (struct sockaddr *)&a, sizeof a);
	shutdown(s, SHUT_RD);
	return recv(s, buf, 10, 0);
}
static long udp_recv_connected_shut(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(9)};
	connect(s, (struct sockaddr *)&a, sizeof a);
	shutdown(s, SHUT_RDWR);
	return recv(s, buf, 10, 0);
}
/* reset_by_peer returns a connection whose peer closed it with a RST
 * (SO_LINGER 0), a tenth of a second ago. */
static int reset_by_peer(void) {
	int sv[2];
	tcp_pair(sv);
	struct linger lg = {1, 0};
	setsockopt(sv[1], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(sv[1]);
	struct timespec t = {0, 100000000};
	nanosleep(&t, NULL);
	return sv[0];
}
static long read_after_peer_reset(void) {
	int s = reset_by_peer();
	read(s, buf, 10);
	return read(s, buf, 10);
}
static long write_after_peer_reset(void) {
	signal(SIGPIPE, SIG_IGN);
	int s = reset_by_peer();
	long r = write(s, buf, 10);
	if (r < 0)
		printf("first write: %s\n", strerror(errno));
	return write(s, buf, 10);
}
static long connect_refused_twice(void) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(1)};
	connect(s, (struct sockaddr *)&a, sizeof a);
	return write(s, buf, 10);
}

int main(void) {
	loopback_up();
	in_child("accept.shut_rd", accept_shut_rd);
	in_child("accept.shut_rdwr", accept_shut_rdwr);
	in_child("accept.bound", accept_bound);
	in_child("read.shut_rd", read_shut_rd);
	in_child("write.shut_rd.fill", write_until_full);
	in_child("write.unconnected", write_unconnected);
	in_child("read.unconnected", read_unconnected);
	in_child("udp.recv.shut_rd", udp_recv_shut);
	in_child("udp.recv.connected.shut", udp_recv_connected_shut);
	in_child("read.after.reset", read_after_peer_reset);
	in_child("write.after.reset", write_after_peer_reset);
	in_child("write.after.refused", connect_refused_twice);
	return 0;
}
