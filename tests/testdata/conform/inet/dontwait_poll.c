/* A program that polls a TCP loopback connection with recv(MSG_DONTWAIT)
 * right after the send (LTP's send02, 1000 rounds in its time limit):
 * Linux has delivered the segment before the send returns. netstack
 * delivers it in goroutines of its own, which the polling thread kept
 * off the hart until the next tick, 57 ms a round; 200 rounds must take
 * well under 5 s. */
#include "../conform.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	bind(l, (struct sockaddr *)&a, sizeof a);
	getsockname(l, (struct sockaddr *)&a, &len);
	listen(l, 1);
	char b[32] = {0};
	int wrong = 0;
	double start = now();
	for (int i = 0; i < 200; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		connect(s, (struct sockaddr *)&a, len);
		int d = accept(l, NULL, NULL);
		send(s, b, 16, 0);
		long n;
		while ((n = recv(d, b, sizeof b, MSG_DONTWAIT)) < 0 && errno == EAGAIN)
			;
		wrong += n != 16;
		close(s);
		close(d);
	}
	SHOW("rounds.wrong", "%d", wrong);
	SHOW("rounds.under.5s", "%d", now() - start < 5);
	return 0;
}
