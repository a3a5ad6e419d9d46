/* A TCP connection's bytes between user memory and the stack: a read
 * into a buffer that faults takes only what reached it, a write from one
 * that faults sends nothing, and bytes written whole, corked or not,
 * arrive whole and in order. */
#include "../conform.h"
#include "listen.h"
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/uio.h>

static void waitIn(int fd) {
	struct pollfd p = {fd, POLLIN, 0};
	poll(&p, 1, 2000);
}

/* sum is a checksum that depends on the bytes' order. */
static unsigned long sum(const unsigned char *b, long n, unsigned long s) {
	for (long i = 0; i < n; i++)
		s = s * 31 + b[i];
	return s;
}

int main(void) {
	struct sockaddr_in a;
	int ls = listenLoopback(&a, 1);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	RET("connect", connect(c, (struct sockaddr *)&a, sizeof a));
	int s = accept(ls, NULL, NULL);
	char buf[64] = {0};

	RET("write helloworld", write(c, "helloworld", 10));
	waitIn(s);
	RET("read into a bad buffer", read(s, BAD, 10));
	struct iovec iov[2] = {{buf, 5}, {BAD, 5}};
	RET("readv good then bad", readv(s, iov, 2));
	SHOW("readv got", "%.5s", buf);
	RET("read the rest", read(s, buf, sizeof buf));
	SHOW("rest", "%.5s", buf);

	RET("write from a bad buffer", write(c, BAD, 10));
	RET("nothing sent", recv(s, buf, sizeof buf, MSG_DONTWAIT));

	int on = 1, off = 0;
	setsockopt(c, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
	RET("corked write 1", write(c, "abc", 3));
	RET("corked write 2", write(c, "defg", 4));
	setsockopt(c, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
	waitIn(s);
	memset(buf, 0, sizeof buf);
	long got = 0;
	while (got < 7) {
		waitIn(s);
		long n = read(s, buf + got, sizeof buf - got);
		if (n <= 0)
			break;
		got += n;
	}
	SHOW("corked bytes", "%ld %s", got, buf);

	/* 1 MiB each way in odd-sized pieces. */
	const long total = 1 << 20;
	unsigned char *out = malloc(total), *in = malloc(4099);
	for (long i = 0; i < total; i++)
		out[i] = (unsigned char)(i * 7 + i / 4096);
	unsigned long want = sum(out, total, 0), have = 0;
	long sent = 0, recvd = 0;
	int flags = 1;
	while (recvd < total) {
		if (sent < total) {
			long k = send(c, out + sent, total - sent < 12345 ? total - sent : 12345, MSG_DONTWAIT);
			if (k > 0)
				sent += k;
		}
		long n = recv(s, in, flags ? 4099 : 1000, MSG_DONTWAIT);
		if (n > 0) {
			have = sum(in, n, have);
			recvd += n;
			flags = !flags;
		} else if (n == 0) {
			break;
		} else if (sent == total) {
			waitIn(s);
		}
	}
	SHOW("1 MiB arrives whole", "%d", recvd == total && have == want);
	close(c);
	waitIn(s);
	RET("end of stream", read(s, buf, sizeof buf));
	close(s);
	close(ls);
	return 0;
}
