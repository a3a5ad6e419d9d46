/* Control messages on TCP and UDP sockets (LTP's recvmsg01 server passes a
 * descriptor with SCM_RIGHTS on whatever connection asked for it): Linux
 * ignores SCM_RIGHTS and SCM_CREDENTIALS there, unread (a bad descriptor
 * too), and refuses another SOL_SOCKET type or a bad cmsg_len with EINVAL;
 * the socket is found before the message is read (EBADF, ENOTSOCK before
 * EFAULT). The data still arrives. */
#include "../../conform/conform.h"
#include "../loopback.h"
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static struct msghdr message(struct iovec *v, char *cb, int type, int fd, size_t len) {
	struct cmsghdr *h = (struct cmsghdr *)cb;
	h->cmsg_len = len;
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = type;
	memcpy(CMSG_DATA(h), &fd, sizeof fd);
	return (struct msghdr){.msg_iov = v, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = CMSG_SPACE(sizeof fd)};
}

int main(void) {
	loopback_up();
	int tcp[2];
	tcp_pair(tcp);
	int s = tcp[0], c = tcp[1];

	char cb[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec v = {"x", 1};
	struct msghdr m = message(&v, cb, SCM_RIGHTS, 0, CMSG_LEN(sizeof(int)));
	RET("tcp.rights", sendmsg(s, &m, 0));
	m = message(&v, cb, SCM_RIGHTS, 999, CMSG_LEN(sizeof(int)));
	RET("tcp.rights.badfd", sendmsg(s, &m, 0));
	m = message(&v, cb, SCM_CREDENTIALS, 0, CMSG_LEN(sizeof(int)));
	RET("tcp.credentials.short", sendmsg(s, &m, 0));
	m = message(&v, cb, 77, 0, CMSG_LEN(sizeof(int)));
	RET("tcp.type77", sendmsg(s, &m, 0));
	m = message(&v, cb, SCM_RIGHTS, 0, CMSG_SPACE(sizeof(int)) + 8);
	RET("tcp.rights.longlen", sendmsg(s, &m, 0));
	m = message(&v, cb, SCM_RIGHTS, 0, 4);
	RET("tcp.rights.shortlen", sendmsg(s, &m, 0));
	/* What the sends that went sent, read to the end. */
	shutdown(s, SHUT_WR);
	char got[16] = {0};
	size_t n = 0;
	for (long k; (k = recv(c, got + n, sizeof got - 1 - n, 0)) > 0;)
		n += k;
	SHOW("tcp.received", "%s", got);

	RET("order.badfd.badmsg", sendmsg(999, BAD, 0));
	RET("order.notsock.badmsg", sendmsg(0, BAD, 0));
	RET("order.tcp.badmsg", sendmsg(s, BAD, 0));

	int u = socket(AF_INET, SOCK_DGRAM, 0);
	int r = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in ua = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t ualen = sizeof ua;
	bind(r, (struct sockaddr *)&ua, sizeof ua);
	getsockname(r, (struct sockaddr *)&ua, &ualen);
	m = message(&v, cb, SCM_RIGHTS, 999, CMSG_LEN(sizeof(int)));
	m.msg_name = &ua;
	m.msg_namelen = sizeof ua;
	RET("udp.rights.badfd", sendmsg(u, &m, 0));
	struct pollfd p = {.fd = r, .events = POLLIN};
	RET("udp.arrived", poll(&p, 1, 2000));
	RET("udp.received", recv(r, got, sizeof got, MSG_DONTWAIT));

	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	m = message(&v, cb, SCM_RIGHTS, 999, CMSG_LEN(sizeof(int)));
	RET("unix.rights.badfd", sendmsg(sv[0], &m, 0));
	m = message(&v, cb, 77, 0, CMSG_LEN(sizeof(int)));
	RET("unix.type77", sendmsg(sv[0], &m, 0));
	return 0;
}
