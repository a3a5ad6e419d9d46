/* MSG_MORE, as LTP's send02 checks it: bytes sent with MSG_MORE wait in
 * the sender (a TCP connection's partial segment, a UDP socket's pending
 * datagram) and leave with the next send without it, so the receiver gets
 * them together in one read; before that the receiver has nothing. A TCP
 * connection's held bytes also leave by themselves after a while. */
#include "../conform.h"
#include "listen.h"
#include <poll.h>

/* received reads what fd has within two seconds: the byte count, or -1
 * and the errno's name through RET when nothing came. */
static long received(int fd) {
	struct pollfd p = {fd, POLLIN, 0};
	poll(&p, 1, 2000);
	char buf[64];
	return recv(fd, buf, sizeof buf, MSG_DONTWAIT);
}

static void tcp(void) {
	struct sockaddr_in a;
	int ls = listenLoopback(&a, 1);
	char data[16];
	memset(data, 0x42, sizeof data);
	int ok = 1;
	for (int i = 0; i < 50 && ok; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		connect(s, (struct sockaddr *)&a, sizeof a);
		int d = accept(ls, NULL, NULL);
		char buf[64];
		if (send(s, data, 16, 0) != 16 || received(d) != 16)
			ok = 0;
		if (send(s, data, 16, MSG_MORE) != 16 || recv(d, buf, sizeof buf, MSG_DONTWAIT) != -1 || errno != EAGAIN)
			ok = 0;
		if (send(s, data, 1, 0) != 1 || received(d) != 17)
			ok = 0;
		if (i == 0) {
			RET("tcp MSG_MORE then recv", send(s, data, 16, MSG_MORE));
			RET("tcp held recv", recv(d, buf, sizeof buf, MSG_DONTWAIT));
			RET("tcp held bytes leave by themselves", received(d));
		}
		close(s);
		close(d);
	}
	SHOW("tcp 50 rounds", "%d", ok);
	close(ls);
}

static void udp(int how) {
	int r = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(r, (struct sockaddr *)&a, sizeof a);
	socklen_t len = sizeof a;
	getsockname(r, (struct sockaddr *)&a, &len);
	char data[16];
	memset(data, 0x42, sizeof data);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (how == 0)
		connect(s, (struct sockaddr *)&a, sizeof a);
	int ok = 1;
	for (int i = 0; i < 50 && ok; i++) {
		long sizes[3] = {16, 16, 1}, got[3];
		int flags[3] = {0, MSG_MORE, 0};
		for (int k = 0; k < 3; k++) {
			struct iovec iov = {data, sizes[k]};
			struct msghdr m = {.msg_name = &a, .msg_namelen = sizeof a, .msg_iov = &iov, .msg_iovlen = 1};
			long n = how == 0 ? send(s, data, sizes[k], flags[k])
			       : how == 1 ? sendto(s, data, sizes[k], flags[k], (struct sockaddr *)&a, sizeof a)
			                  : sendmsg(s, &m, flags[k]);
			if (n != sizes[k])
				ok = 0;
			got[k] = k == 1 ? recv(r, data, sizeof data, MSG_DONTWAIT) : received(r);
		}
		if (got[0] != 16 || got[1] != -1 || got[2] != 17)
			ok = 0;
		if (!ok)
			SHOW("udp failed round", "%ld %ld %ld", got[0], got[1], got[2]);
	}
	SHOW("udp 50 rounds", "%d %d", how, ok);
	close(s);
	close(r);
}

int main(void) {
	tcp();
	udp(0);
	udp(1);
	udp(2);
	return 0;
}
