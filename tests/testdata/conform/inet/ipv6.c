/* IPv6 sockets over the loopback interface: ::1, a dual-stack listener on
 * [::] that IPv4 clients reach as v4-mapped addresses, IPV6_V6ONLY, and
 * sockaddr_in6 lengths. Ports are chosen by bind(port 0), never printed. */
#include "../conform.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int get(int s, int level, int name) {
	int v = -1;
	socklen_t l = sizeof v;
	if (getsockopt(s, level, name, &v, &l) < 0)
		return -1000 - errno;
	return v;
}

static const char *show6(const struct sockaddr_in6 *a) {
	static char buf[INET6_ADDRSTRLEN];
	return inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
}

/* listen6 listens on [addr]:0 and returns the port. */
static int listen6(const struct in6_addr *addr, int v6only, unsigned short *port) {
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	if (v6only >= 0)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
	struct sockaddr_in6 a = {0};
	a.sin6_family = AF_INET6;
	a.sin6_addr = *addr;
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 8) < 0)
		return -1;
	socklen_t len = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &len);
	*port = ntohs(a.sin6_port);
	return s;
}

int main(void) {
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	SHOW("SO_DOMAIN", "%d", get(s, SOL_SOCKET, SO_DOMAIN));
	SHOW("IPV6_V6ONLY default", "%d", get(s, IPPROTO_IPV6, IPV6_V6ONLY));
	close(s);

	/* ::1 to ::1. */
	unsigned short port;
	int ls = listen6(&in6addr_loopback, -1, &port);
	SHOW("listen ::1", "%d", ls >= 0);
	int c = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 to = {0};
	to.sin6_family = AF_INET6;
	to.sin6_port = htons(port);
	to.sin6_addr = in6addr_loopback;
	RET("connect ::1", connect(c, (struct sockaddr *)&to, sizeof to));
	struct sockaddr_in6 peer = {0};
	socklen_t pl = sizeof peer;
	int a = accept(ls, (struct sockaddr *)&peer, &pl);
	SHOW("accept ::1", "%d peer %s len %d", a >= 0, show6(&peer), (int)pl);
	RET("send", send(c, "six", 3, 0));
	char buf[16] = {0};
	RET("recv", recv(a, buf, sizeof buf, 0));
	SHOW("data", "%s", buf);
	close(a);
	close(c);
	close(ls);
	RET("connect short sockaddr", connect(socket(AF_INET6, SOCK_STREAM, 0), (struct sockaddr *)&to, 16));

	/* Dual stack: [::] takes an IPv4 client, seen as ::ffff:127.0.0.1. */
	ls = listen6(&in6addr_any, -1, &port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in to4 = {0};
	to4.sin_family = AF_INET;
	to4.sin_port = htons(port);
	to4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	RET("connect v4 to [::]", connect(c, (struct sockaddr *)&to4, sizeof to4));
	pl = sizeof peer;
	a = accept(ls, (struct sockaddr *)&peer, &pl);
	SHOW("accept v4 client", "%d peer %s len %d", a >= 0, show6(&peer), (int)pl);
	struct sockaddr_in6 local = {0};
	socklen_t ll = sizeof local;
	getsockname(a, (struct sockaddr *)&local, &ll);
	SHOW("accepted local", "%s", show6(&local));
	close(a);
	close(c);

	/* A v6 socket connecting to a v4-mapped address. */
	c = socket(AF_INET6, SOCK_STREAM, 0);
	to.sin6_port = htons(port);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &to.sin6_addr);
	RET("connect v4-mapped", connect(c, (struct sockaddr *)&to, sizeof to));
	pl = sizeof peer;
	getpeername(c, (struct sockaddr *)&peer, &pl);
	SHOW("v4-mapped peer", "%s", show6(&peer));
	a = accept(ls, NULL, NULL);
	SHOW("accept v4-mapped", "%d", a >= 0);
	close(a);
	close(c);
	close(ls);

	/* IPV6_V6ONLY: IPv4 clients refused, and the port free for IPv4. */
	ls = listen6(&in6addr_any, 1, &port);
	SHOW("IPV6_V6ONLY set", "%d", get(ls, IPPROTO_IPV6, IPV6_V6ONLY));
	c = socket(AF_INET, SOCK_STREAM, 0);
	to4.sin_port = htons(port);
	RET("connect v4 to v6only", connect(c, (struct sockaddr *)&to4, sizeof to4));
	close(c);
	int l4 = socket(AF_INET, SOCK_STREAM, 0);
	RET("bind v4 beside v6only", bind(l4, (struct sockaddr *)&to4, sizeof to4));
	close(l4);
	c = socket(AF_INET6, SOCK_STREAM, 0);
	setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &(int){1}, sizeof(int));
	RET("v6only connect v4-mapped", connect(c, (struct sockaddr *)&to, sizeof to));
	close(c);
	close(ls);

	/* UDP over ::1. */
	int u = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 ua = {0};
	ua.sin6_family = AF_INET6;
	ua.sin6_addr = in6addr_loopback;
	RET("udp bind ::1", bind(u, (struct sockaddr *)&ua, sizeof ua));
	socklen_t ul = sizeof ua;
	getsockname(u, (struct sockaddr *)&ua, &ul);
	int v = socket(AF_INET6, SOCK_DGRAM, 0);
	RET("udp sendto ::1", sendto(v, "dgram6", 6, 0, (struct sockaddr *)&ua, sizeof ua));
	struct sockaddr_in6 from = {0};
	socklen_t fl = sizeof from;
	memset(buf, 0, sizeof buf);
	RET("udp recvfrom", recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl));
	SHOW("udp from", "%s %s len %d", buf, show6(&from), (int)fl);
	close(u);
	close(v);
	return 0;
}
