/* Socket options on TCP sockets as servers and clients set them:
 * SO_REUSEADDR, SO_REUSEPORT, SO_KEEPALIVE, TCP_NODELAY, TCP_CORK,
 * SO_RCVBUF/SO_SNDBUF, SO_LINGER, TCP_DEFER_ACCEPT, SO_TYPE, SO_DOMAIN,
 * SO_PROTOCOL, SO_ACCEPTCONN, short option lengths, unknown options, and
 * the same questions asked of a Unix socket. */
#include "../conform.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

static int get(int s, int level, int name) {
	int v = -1;
	socklen_t l = sizeof v;
	if (getsockopt(s, level, name, &v, &l) < 0)
		return -1000 - errno;
	return v;
}

/* flag turns an option on and off; with_default also shows its default. */
static void flag(const char *name, int s, int level, int opt, int with_default) {
	char label[64];
	if (with_default) {
		snprintf(label, sizeof label, "%s default", name);
		SHOW(label, "%d", get(s, level, opt) != 0);
	}
	snprintf(label, sizeof label, "%s set", name);
	RET(label, setsockopt(s, level, opt, &(int){1}, sizeof(int)));
	snprintf(label, sizeof label, "%s on", name);
	SHOW(label, "%d", get(s, level, opt) != 0);
	setsockopt(s, level, opt, &(int){0}, sizeof(int));
	snprintf(label, sizeof label, "%s off", name);
	SHOW(label, "%d", get(s, level, opt) != 0);
}

int main(void) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	flag("SO_REUSEADDR", s, SOL_SOCKET, SO_REUSEADDR, 1);
	flag("SO_REUSEPORT", s, SOL_SOCKET, SO_REUSEPORT, 1);
	flag("SO_KEEPALIVE", s, SOL_SOCKET, SO_KEEPALIVE, 1);
	/* Not its default: Linux starts with Nagle on, the kernel with it off
	 * (netstack's default; see DESIGN.md, "Network"). */
	flag("TCP_NODELAY", s, IPPROTO_TCP, TCP_NODELAY, 0);
	flag("TCP_CORK", s, IPPROTO_TCP, TCP_CORK, 1);
	SHOW("SO_TYPE", "%d", get(s, SOL_SOCKET, SO_TYPE));
	SHOW("SO_DOMAIN", "%d", get(s, SOL_SOCKET, SO_DOMAIN));
	SHOW("SO_PROTOCOL", "%d", get(s, SOL_SOCKET, SO_PROTOCOL));
	SHOW("SO_ERROR", "%d", get(s, SOL_SOCKET, SO_ERROR));

	RET("SO_RCVBUF set", setsockopt(s, SOL_SOCKET, SO_RCVBUF, &(int){65536}, sizeof(int)));
	SHOW("SO_RCVBUF at least asked", "%d", get(s, SOL_SOCKET, SO_RCVBUF) >= 65536);
	RET("SO_SNDBUF set", setsockopt(s, SOL_SOCKET, SO_SNDBUF, &(int){65536}, sizeof(int)));
	SHOW("SO_SNDBUF at least asked", "%d", get(s, SOL_SOCKET, SO_SNDBUF) >= 65536);

	struct linger lg = {1, 5};
	RET("SO_LINGER set", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
	struct linger back = {0};
	socklen_t bl = sizeof back;
	RET("SO_LINGER get", getsockopt(s, SOL_SOCKET, SO_LINGER, &back, &bl));
	SHOW("SO_LINGER value", "%d %d len %d", back.l_onoff, back.l_linger, (int)bl);
	RET("SO_LINGER short", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, 4));

	RET("TCP_DEFER_ACCEPT set", setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &(int){5}, sizeof(int)));
	SHOW("TCP_DEFER_ACCEPT 5", "%d", get(s, IPPROTO_TCP, TCP_DEFER_ACCEPT));
	int defer_in[] = {1, 2, 30, 100, 200, 0};
	for (int i = 0; i < 6; i++) {
		setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_in[i], sizeof(int));
		SHOW("TCP_DEFER_ACCEPT", "%d -> %d", defer_in[i], get(s, IPPROTO_TCP, TCP_DEFER_ACCEPT));
	}
	RET("short optlen", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &(int){1}, 2));
	RET("unknown option", setsockopt(s, SOL_SOCKET, 9999, &(int){1}, sizeof(int)));
	RET("unknown tcp option", getsockopt(s, IPPROTO_TCP, 9999, &(int){0}, &(socklen_t){4}));

	/* A one-byte optlen gets one byte back. */
	unsigned char small[4] = {0xee, 0xee, 0xee, 0xee};
	socklen_t sl = 1;
	RET("getsockopt 1 byte", getsockopt(s, SOL_SOCKET, SO_TYPE, small, &sl));
	SHOW("1 byte value", "%d %#x len %d", small[0], small[1], (int)sl);
	RET("getsockopt negative len", getsockopt(s, SOL_SOCKET, SO_TYPE, small, &(socklen_t){-1}));

	SHOW("SO_ACCEPTCONN before", "%d", get(s, SOL_SOCKET, SO_ACCEPTCONN));
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
	RET("bind", bind(s, (struct sockaddr *)&a, sizeof a));
	RET("listen", listen(s, 4));
	SHOW("SO_ACCEPTCONN listening", "%d", get(s, SOL_SOCKET, SO_ACCEPTCONN));

	/* SO_REUSEPORT on both: two listeners on one port. */
	socklen_t al = sizeof a;
	int p1 = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(p1, SOL_SOCKET, SO_REUSEPORT, &(int){1}, sizeof(int));
	a.sin_port = 0;
	bind(p1, (struct sockaddr *)&a, sizeof a);
	getsockname(p1, (struct sockaddr *)&a, &al);
	RET("listen first", listen(p1, 4));
	int p2 = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(p2, SOL_SOCKET, SO_REUSEPORT, &(int){1}, sizeof(int));
	RET("bind shared port", bind(p2, (struct sockaddr *)&a, sizeof a));
	RET("listen second", listen(p2, 4));
	int p3 = socket(AF_INET, SOCK_STREAM, 0);
	RET("bind without SO_REUSEPORT", bind(p3, (struct sockaddr *)&a, sizeof a));
	close(p1);
	close(p2);
	close(p3);
	close(s);

	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	SHOW("unix SO_TYPE", "%d", get(u, SOL_SOCKET, SO_TYPE));
	SHOW("unix SO_DOMAIN", "%d", get(u, SOL_SOCKET, SO_DOMAIN));
	SHOW("unix SO_PROTOCOL", "%d", get(u, SOL_SOCKET, SO_PROTOCOL));
	SHOW("unix SO_ACCEPTCONN", "%d", get(u, SOL_SOCKET, SO_ACCEPTCONN));
	SHOW("unix TCP_NODELAY", "%d", get(u, IPPROTO_TCP, TCP_NODELAY));
	close(u);
	return 0;
}
