/* UDP over the loopback interface: bind, sendto/recvfrom with addresses,
 * connect and send, sendmsg/recvmsg with msg_name, MSG_PEEK, MSG_TRUNC,
 * datagram boundaries, readiness for poll and epoll, AF_UNSPEC connect.
 * Ports are chosen by bind(port 0) and never printed. */
#include "../conform.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static struct sockaddr_in loopback(unsigned short port) {
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int bound(unsigned short *port) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = loopback(0);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0)
		return -1;
	socklen_t len = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &len);
	*port = ntohs(a.sin_port);
	return s;
}

int main(void) {
	unsigned short pa, pb;
	int a = bound(&pa), b = bound(&pb);
	SHOW("sockets", "%d %d", a >= 0, b >= 0);
	struct sockaddr_in toa = loopback(pa), tob = loopback(pb);

	int v;
	socklen_t vl = sizeof v;
	RET("SO_TYPE", getsockopt(a, SOL_SOCKET, SO_TYPE, &v, &vl));
	SHOW("SO_TYPE value", "%d", v);
	RET("SO_PROTOCOL", getsockopt(a, SOL_SOCKET, SO_PROTOCOL, &v, &vl));
	SHOW("SO_PROTOCOL value", "%d", v);
	RET("listen", listen(a, 1));
	RET("accept", accept(a, NULL, NULL));
	RET("TCP_NODELAY on udp", setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int)));

	RET("recv nothing", recv(b, &v, sizeof v, MSG_DONTWAIT));
	struct pollfd p = {b, POLLIN | POLLOUT, 0};
	RET("poll idle", poll(&p, 1, 0));
	SHOW("poll idle revents", "%#x", p.revents);

	RET("sendto", sendto(a, "hello", 5, 0, (struct sockaddr *)&tob, sizeof tob));
	RET("sendto second", sendto(a, "world!", 6, 0, (struct sockaddr *)&tob, sizeof tob));
	RET("sendto empty", sendto(a, "", 0, 0, (struct sockaddr *)&tob, sizeof tob));
	p.revents = 0;
	RET("poll ready", poll(&p, 1, 5000));
	SHOW("poll ready revents", "%#x", p.revents);
	int epfd = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7};
	epoll_ctl(epfd, EPOLL_CTL_ADD, b, &ev);
	struct epoll_event got = {0};
	RET("epoll_wait", epoll_wait(epfd, &got, 1, 5000));
	SHOW("epoll event", "%#x %u", got.events, got.data.u32);

	char buf[64] = {0};
	struct sockaddr_in from = {0};
	socklen_t fl = sizeof from;
	RET("recvfrom peek", recvfrom(b, buf, 2, MSG_PEEK, (struct sockaddr *)&from, &fl));
	SHOW("peeked", "%s from %s same port %d len %d", buf, inet_ntoa(from.sin_addr), from.sin_port == toa.sin_port, (int)fl);
	memset(buf, 0, sizeof buf);
	RET("recv trunc", recv(b, buf, 3, MSG_TRUNC));
	SHOW("got", "%s", buf);

	/* recvmsg: msg_name and MSG_TRUNC in msg_flags. */
	struct iovec iov[2] = {{buf, 2}, {buf + 2, 2}};
	memset(buf, 0, sizeof buf);
	struct msghdr m = {0};
	m.msg_name = &from;
	m.msg_namelen = sizeof from;
	m.msg_iov = iov;
	m.msg_iovlen = 2;
	RET("recvmsg", recvmsg(b, &m, 0));
	SHOW("recvmsg data", "%s flags %#x namelen %d same port %d", buf, m.msg_flags, (int)m.msg_namelen,
	     from.sin_port == toa.sin_port);
	RET("recv empty datagram", recv(b, buf, sizeof buf, 0));
	RET("recv after all", recv(b, buf, sizeof buf, MSG_DONTWAIT));

	/* sendmsg with msg_name, received whole in one buffer. */
	char part1[] = "ab", part2[] = "cde";
	struct iovec out[2] = {{part1, 2}, {part2, 3}};
	struct msghdr sm = {0};
	sm.msg_name = &toa;
	sm.msg_namelen = sizeof toa;
	sm.msg_iov = out;
	sm.msg_iovlen = 2;
	RET("sendmsg", sendmsg(b, &sm, 0));
	memset(buf, 0, sizeof buf);
	fl = sizeof from;
	RET("recvfrom", recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl));
	SHOW("recvfrom data", "%s same port %d", buf, from.sin_port == tob.sin_port);

	/* Connected: send and write without an address; other senders filtered. */
	RET("send unconnected", send(a, "x", 1, 0));
	RET("connect", connect(a, (struct sockaddr *)&tob, sizeof tob));
	struct sockaddr_in peer;
	socklen_t pl = sizeof peer;
	RET("getpeername", getpeername(a, (struct sockaddr *)&peer, &pl));
	SHOW("peer", "%s same port %d", inet_ntoa(peer.sin_addr), peer.sin_port == tob.sin_port);
	RET("send connected", send(a, "one", 3, 0));
	RET("write connected", write(a, "two", 3));
	memset(buf, 0, sizeof buf);
	RET("read", read(b, buf, sizeof buf));
	SHOW("read data", "%s", buf);
	memset(buf, 0, sizeof buf);
	RET("read second", read(b, buf, sizeof buf));
	SHOW("read second data", "%s", buf);
	unsigned short pc;
	int c = bound(&pc);
	RET("third party sendto", sendto(c, "no", 2, 0, (struct sockaddr *)&toa, sizeof toa));
	RET("peer sendto", sendto(b, "yes", 3, 0, (struct sockaddr *)&toa, sizeof toa));
	memset(buf, 0, sizeof buf);
	RET("connected recv", recv(a, buf, sizeof buf, 0));
	SHOW("connected recv data", "%s", buf);
	RET("connected recv only peer", recv(a, buf, sizeof buf, MSG_DONTWAIT));

	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	RET("connect AF_UNSPEC", connect(a, &unspec, sizeof unspec));
	RET("getpeername after", getpeername(a, (struct sockaddr *)&peer, &pl));
	RET("send after disconnect", send(a, "x", 1, 0));

	/* sendmmsg and recvmmsg: several datagrams per call. */
	char m0[] = "m0", m1[] = "m11", m2[] = "m222";
	struct iovec mv[3] = {{m0, 2}, {m1, 3}, {m2, 4}};
	struct mmsghdr mm[3];
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 3; i++) {
		mm[i].msg_hdr.msg_name = &tob;
		mm[i].msg_hdr.msg_namelen = sizeof tob;
		mm[i].msg_hdr.msg_iov = &mv[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	RET("sendmmsg", sendmmsg(a, mm, 3, 0));
	SHOW("sendmmsg lengths", "%u %u %u", mm[0].msg_len, mm[1].msg_len, mm[2].msg_len);
	char rb[4][8];
	struct iovec rv[4];
	struct mmsghdr rm[4];
	struct sockaddr_in rfrom[4];
	memset(rb, 0, sizeof rb);
	memset(rm, 0, sizeof rm);
	for (int i = 0; i < 4; i++) {
		rv[i].iov_base = rb[i];
		rv[i].iov_len = 3;
		rm[i].msg_hdr.msg_iov = &rv[i];
		rm[i].msg_hdr.msg_iovlen = 1;
		rm[i].msg_hdr.msg_name = &rfrom[i];
		rm[i].msg_hdr.msg_namelen = sizeof rfrom[i];
	}
	usleep(100000);
	RET("recvmmsg waitforone", recvmmsg(b, rm, 4, MSG_WAITFORONE, NULL));
	SHOW("recvmmsg got", "%s/%u/%#x %s/%u/%#x %.3s/%u/%#x", rb[0], rm[0].msg_len, rm[0].msg_hdr.msg_flags, rb[1],
	     rm[1].msg_len, rm[1].msg_hdr.msg_flags, rb[2], rm[2].msg_len, rm[2].msg_hdr.msg_flags);
	SHOW("recvmmsg sender", "%s len %d", inet_ntoa(rfrom[2].sin_addr), (int)rm[2].msg_hdr.msg_namelen);
	RET("recvmmsg none", recvmmsg(b, rm, 4, MSG_DONTWAIT, NULL));

	/* Sizes and errors. */
	static char big[70000];
	RET("sendto too big", sendto(a, big, sizeof big, 0, (struct sockaddr *)&tob, sizeof tob));
	RET("sendto short address", sendto(a, "x", 1, 0, (struct sockaddr *)&tob, 8));
	struct sockaddr_in port0 = loopback(pb);
	port0.sin_family = AF_INET6;
	RET("sendto wrong family", sendto(a, "x", 1, 0, (struct sockaddr *)&port0, sizeof port0));
	RET("bind again", bind(a, (struct sockaddr *)&tob, sizeof tob));
	RET("socket dgram tcp", socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP));
	RET("socket stream udp", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
	close(a);
	close(b);
	close(c);
	return 0;
}
