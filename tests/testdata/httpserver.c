/* A blocking HTTP/1.0 server run as /init by tests/net_test.go: it serves
 * REQUESTS requests, each with a
 * body naming the request number and the peer's address, then exits 0. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQUESTS 20

int main(void) {
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		perror("socket");
		return 1;
	}
	int one = 1;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) {
		perror("setsockopt");
		return 1;
	}
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(80)};
	if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 16) < 0) {
		perror("bind/listen");
		return 1;
	}
	socklen_t len = sizeof addr;
	getsockname(s, (struct sockaddr *)&addr, &len);
	printf("server: listening on port %d\n", ntohs(addr.sin_port));
	fflush(stdout);
	for (int i = 1; i <= REQUESTS; i++) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof peer;
		int c = accept4(s, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (c < 0) {
			perror("accept4");
			return 1;
		}
		char req[4096];
		size_t got = 0;
		while (got < sizeof req - 1) {
			ssize_t n = read(c, req + got, sizeof req - 1 - got);
			if (n <= 0)
				break;
			got += n;
			req[got] = 0;
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		char body[256], resp[512];
		int blen = snprintf(body, sizeof body, "request %d from %s\n", i, inet_ntoa(peer.sin_addr));
		int rlen = snprintf(resp, sizeof resp, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", blen, body);
		if (write(c, resp, rlen) != rlen) {
			perror("write");
			return 1;
		}
		close(c);
	}
	printf("server: served %d requests\n", REQUESTS);
	return 0;
}
