/* Errors of socket calls LTP checks: socketpair's order of checks,
 * getsockname without a buffer, recv's MSG_OOB and MSG_ERRQUEUE on TCP,
 * recvfrom of TCP (no address), a bad msghdr, getsockopt's levels,
 * SO_OOBINLINE, SO_SNDBUFFORCE, SIOCATMARK, a second connect, SO_RCVTIMEO,
 * EPOLLRDHUP after SHUT_RD,
 * calls on an O_PATH descriptor, a privileged port bound by an
 * unprivileged user. */
#include "../conform.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

int main(void) {
	int sv[2];
	RET("socketpair.badflags.inet", socketpair(AF_INET, 75, 0, sv));
	RET("socketpair.raw.inet", socketpair(AF_INET, SOCK_RAW, 0, sv));
	RET("socketpair.udp", socketpair(AF_INET, SOCK_DGRAM, IPPROTO_UDP, sv));
	RET("socketpair.dgram.tcp", socketpair(AF_INET, SOCK_DGRAM, IPPROTO_TCP, sv));
	RET("socketpair.tcp", socketpair(AF_INET, SOCK_STREAM, IPPROTO_TCP, sv));
	RET("socketpair.family0", socketpair(0, SOCK_STREAM, 0, sv));
	RET("socketpair.badptr", socketpair(AF_UNIX, SOCK_STREAM, 0, BAD));

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	RET("bind", bind(l, (struct sockaddr *)&a, sizeof a));
	getsockname(l, (struct sockaddr *)&a, &alen);
	listen(l, 5);
	socklen_t len = sizeof a;
	RET("getsockname.null", getsockname(l, NULL, &len));
	RET("getsockname.badlen", getsockname(l, (struct sockaddr *)&a, BAD));

	int c = socket(AF_INET, SOCK_STREAM, 0);
	RET("connect", connect(c, (struct sockaddr *)&a, sizeof a));
	RET("connect.again", connect(c, (struct sockaddr *)&a, sizeof a));
	int s = accept(l, NULL, NULL);
	char buf[64];
	RET("recv.MSG_OOB", recv(c, buf, sizeof buf, MSG_OOB));
	RET("recv.MSG_ERRQUEUE", recv(c, buf, sizeof buf, MSG_ERRQUEUE));
	send(s, "data", 4, 0);
	struct sockaddr_in from;
	socklen_t fromlen = sizeof from;
	RET("recvfrom.tcp.badaddr", recvfrom(c, buf, sizeof buf, 0, (struct sockaddr *)BAD, &fromlen));
	SHOW("recvfrom.tcp.fromlen", "%d", (int)fromlen);
	struct iovec iov = {buf, sizeof buf};
	struct msghdr m = {0};
	m.msg_name = &from;
	m.msg_namelen = -1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	RET("recvmsg.namelen", recvmsg(c, &m, MSG_DONTWAIT));
	RET("sendmsg.namelen", sendmsg(c, &m, 0));
	m.msg_namelen = sizeof from;
	m.msg_iovlen = -1;
	RET("recvmsg.iovlen", recvmsg(c, &m, MSG_DONTWAIT));
	m.msg_iovlen = 1025;
	RET("sendmsg.iovlen", sendmsg(c, &m, 0));
	int atmark = -1;
	RET("SIOCATMARK", ioctl(c, SIOCATMARK, &atmark));
	SHOW("SIOCATMARK.value", "%d", atmark);
	RET("SIOCATMARK.badptr", ioctl(c, SIOCATMARK, NULL));

	int v = -1;
	len = sizeof v;
	RET("SO_OOBINLINE", getsockopt(c, SOL_SOCKET, SO_OOBINLINE, &v, &len));
	SHOW("SO_OOBINLINE.value", "%d", v);
	v = 1;
	RET("SO_OOBINLINE.set", setsockopt(c, SOL_SOCKET, SO_OOBINLINE, &v, sizeof v));
	len = sizeof v;
	getsockopt(c, SOL_SOCKET, SO_OOBINLINE, &v, &len);
	SHOW("SO_OOBINLINE.after", "%d", v);
	RET("getsockopt.nullval", getsockopt(c, SOL_SOCKET, SO_OOBINLINE, NULL, &len));
	RET("getsockopt.nulllen", getsockopt(c, SOL_SOCKET, SO_OOBINLINE, &v, NULL));
	RET("getsockopt.level500", getsockopt(c, 500, SO_OOBINLINE, &v, &len));
	RET("getsockopt.udp.on.tcp", getsockopt(c, IPPROTO_UDP, SO_OOBINLINE, &v, &len));
	RET("getsockopt.ip.bad", getsockopt(c, IPPROTO_IP, -1, &v, &len));
	RET("getsockopt.tcp.bad", getsockopt(c, IPPROTO_TCP, -1, &v, &len));
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	RET("udp.getsockopt.tcp", getsockopt(u, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	RET("udp.getsockopt.udp.bad", getsockopt(u, IPPROTO_UDP, -1, &v, &len));
	v = -1000;
	RET("SO_SNDBUFFORCE", setsockopt(u, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v));
	len = sizeof v;
	getsockopt(u, SOL_SOCKET, SO_SNDBUF, &v, &len);
	SHOW("SO_SNDBUFFORCE.nonnegative", "%d", v >= 0);

	/* SO_RCVTIMEO ends a wait on TCP, UDP and netlink with EAGAIN. */
	struct timeval tv = {0, 100000};
	int nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	int socks[3] = {c, u, nl};
	for (int i = 0; i < 3; i++) {
		char what[32];
		snprintf(what, sizeof what, "SO_RCVTIMEO.%d", i);
		RET(what, setsockopt(socks[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
		snprintf(what, sizeof what, "recv.timeout.%d", i);
		RET(what, recv(socks[i], buf, sizeof buf, 0));
	}

	/* A socket shut down for reading reports EPOLLRDHUP and EPOLLIN. */
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLRDHUP, .data.fd = c};
	epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
	RET("tcp.shutdown.rd", shutdown(c, SHUT_RD));
	struct epoll_event got;
	RET("tcp.epoll.rdhup", epoll_wait(ep, &got, 1, 1000));
	SHOW("tcp.epoll.rdhup.events", "%#x", got.events);
	struct pollfd pu = {u, POLLIN | POLLRDHUP, 0};
	RET("udp.shutdown.rd", shutdown(u, SHUT_RD));
	RET("udp.poll.rdhup", poll(&pu, 1, 1000));
	SHOW("udp.poll.rdhup.events", "%#x", pu.revents);

	int path = open(".", O_PATH);
	RET("accept.O_PATH", accept(path, NULL, NULL));
	RET("getsockopt.O_PATH", getsockopt(path, SOL_SOCKET, SO_TYPE, &v, &len));
	RET("accept.notsock", accept(0, NULL, NULL));

	pid_t child = fork();
	if (child == 0) {
		setuid(65534);
		RET("unprivileged.SO_SNDBUFFORCE", setsockopt(u, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v));
		int b = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in p = {.sin_family = AF_INET, .sin_port = htons(463)};
		RET("unprivileged.bind.463", bind(b, (struct sockaddr *)&p, sizeof p));
		p.sin_port = 0;
		RET("unprivileged.bind.0", bind(b, (struct sockaddr *)&p, sizeof p));
		_exit(0);
	}
	waitpid(child, NULL, 0);
	return 0;
}
