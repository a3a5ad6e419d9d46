/* An event-driven HTTP/1.1 server in nginx's style, run as /init by
 * tests/net_test.go: a non-blocking listening socket and connections in one
 * edge-triggered epoll set, keep-alive, and an eventfd that the loop
 * signals itself through. It exits 0 after REQUESTS requests. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQUESTS 60

static char buf[1024][2048];
static size_t have[1024];

int main(void) {
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(80)};
	if (bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(ls, 64) < 0) {
		perror("bind/listen");
		return 1;
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = ls};
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	ev.data.fd = efd;
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	uint64_t kick = 1;
	if (write(efd, &kick, sizeof kick) != sizeof kick)
		return 2;
	printf("server: listening on port 80 with epoll\n");
	fflush(stdout);
	int served = 0, notified = 0;
	while (served < REQUESTS) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 10000);
		if (n < 0) {
			perror("epoll_wait");
			return 3;
		}
		if (n == 0) {
			fprintf(stderr, "server: idle for 10 s\n");
			return 4;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == efd) {
				uint64_t v;
				if (read(efd, &v, sizeof v) == sizeof v)
					notified += v;
			} else if (fd == ls) {
				for (;;) {
					int c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
					if (c < 0) {
						if (errno != EAGAIN)
							perror("accept4");
						break;
					}
					if (c >= 1024)
						return 5;
					have[c] = 0;
					struct epoll_event cev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.fd = c};
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
				}
			} else {
				int closed = 0;
				for (;;) {
					ssize_t r = read(fd, buf[fd] + have[fd], sizeof buf[fd] - 1 - have[fd]);
					if (r > 0) {
						have[fd] += r;
						continue;
					}
					if (r == 0 || errno != EAGAIN)
						closed = 1;
					break;
				}
				buf[fd][have[fd]] = 0;
				char *end;
				while ((end = strstr(buf[fd], "\r\n\r\n")) != NULL) {
					served++;
					char body[64], resp[256];
					int blen = snprintf(body, sizeof body, "response %d\n", served);
					int rlen = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", blen, body);
					if (write(fd, resp, rlen) != rlen)
						closed = 1;
					size_t used = end + 4 - buf[fd];
					memmove(buf[fd], end + 4, have[fd] - used + 1);
					have[fd] -= used;
				}
				if (closed) {
					close(fd); /* also leaves the epoll set */
				}
			}
		}
	}
	printf("server: served %d requests, eventfd counted %d\n", served, notified);
	return notified == 1 ? 0 : 6;
}
