/* Unix stream sockets: socketpair, descriptors passed with SCM_RIGHTS,
 * sockets bound to a path and to an abstract name, send and receive
 * flags, shutdown. */
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

static int send_fd(int sock, int fd, const char *data) {
	char control[CMSG_SPACE(sizeof(int))];
	memset(control, 0, sizeof control);
	struct iovec iov = {(void *)data, strlen(data)};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = control;
	m.msg_controllen = sizeof control;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &m, 0);
}

static int recv_fd(int sock, char *data, size_t len, int *flags, size_t controllen) {
	char control[64];
	struct iovec iov = {data, len};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = control;
	m.msg_controllen = controllen;
	long n = recvmsg(sock, &m, 0);
	*flags = m.msg_flags;
	if (n < 0)
		return -1;
	data[n] = 0;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c == NULL || c->cmsg_type != SCM_RIGHTS)
		return -2;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	return fd;
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	int sv[2];
	char buf[128];
	RET("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	RET("send", send(sv[0], "ping", 4, 0));
	RET("recv.peek", recv(sv[1], buf, sizeof buf, MSG_PEEK));
	RET("recv", recv(sv[1], buf, sizeof buf, 0));
	SHOW("recv.data", "%.4s", buf);
	RET("recv.dontwait.empty", recv(sv[1], buf, sizeof buf, MSG_DONTWAIT));
	int type, domain;
	socklen_t len = sizeof type;
	RET("getsockopt.type", getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len));
	SHOW("type", "%d", type);
	len = sizeof domain;
	RET("getsockopt.domain", getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &domain, &len));
	SHOW("domain", "%d", domain);
	RET("socketpair.inet", socketpair(AF_INET, SOCK_STREAM, 0, sv));

	/* A pipe's read end travels over the socket, and works in the receiver. */
	int p[2];
	pipe(p);
	write(p[1], "through the pipe", 16);
	RET("sendmsg.rights", send_fd(sv[0], p[0], "fd"));
	RET("send.after", send(sv[0], "more", 4, 0));
	int flags;
	int fd = recv_fd(sv[1], buf, sizeof buf, &flags, sizeof(char[CMSG_SPACE(sizeof(int))]));
	SHOW("recvmsg.fd.valid", "%d", fd > 2 && fd != p[0]);
	SHOW("recvmsg.data", "%s", buf);
	SHOW("recvmsg.flags", "%d", flags);
	long n = read(fd, buf, sizeof buf);
	SHOW("read.passed", "%.*s", (int)n, buf);
	RET("recv.rest", recv(sv[1], buf, sizeof buf, 0));
	close(fd);
	/* A control buffer too small: MSG_CTRUNC, no descriptor. */
	RET("sendmsg.again", send_fd(sv[0], p[1], "x"));
	fd = recv_fd(sv[1], buf, sizeof buf, &flags, 8);
	SHOW("ctrunc.fd", "%d", fd);
	SHOW("ctrunc.flag", "%d", (flags & MSG_CTRUNC) != 0);
	RET("sendmsg.badfd", send_fd(sv[0], 99, "x"));
	RET("shutdown.write", shutdown(sv[0], SHUT_WR));
	RET("recv.after.shutdown", recv(sv[1], buf, sizeof buf, 0));
	RET("send.after.shutdown", send(sv[0], "x", 1, 0));
	RET("close", close(sv[1]));
	RET("send.nosignal.closed", send(sv[0], "x", 1, MSG_NOSIGNAL));
	close(sv[0]);

	/* Bound to a path: listen, connect, accept. */
	int srv = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path, "sock");
	RET("bind", bind(srv, (struct sockaddr *)&a, sizeof a));
	struct stat st;
	RET("stat.sock", stat("sock", &st));
	SHOW("stat.sock.type", "%d", S_ISSOCK(st.st_mode));
	int again = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("bind.inuse", bind(again, (struct sockaddr *)&a, sizeof a));
	RET("connect.notlistening", connect(again, (struct sockaddr *)&a, sizeof a));
	RET("listen", listen(srv, 4));
	fcntl(srv, F_SETFL, O_NONBLOCK);
	RET("accept.nonblock.none", accept(srv, NULL, NULL));
	fcntl(srv, F_SETFL, 0);
	int cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	RET("connect", connect(cli, (struct sockaddr *)&a, sizeof a));
	struct sockaddr_un peer;
	len = sizeof peer;
	int conn = accept(srv, (struct sockaddr *)&peer, &len);
	SHOW("accept.valid", "%d", conn > 2);
	SHOW("accept.peerlen", "%d", (int)len);
	len = sizeof peer;
	RET("getpeername.client", getpeername(cli, (struct sockaddr *)&peer, &len));
	SHOW("getpeername.client.path", "%s", peer.sun_path);
	len = sizeof peer;
	RET("getsockname.server", getsockname(srv, (struct sockaddr *)&peer, &len));
	SHOW("getsockname.server.path", "%s len %d", peer.sun_path, (int)len);
	pid_t pid = fork();
	if (pid == 0) {
		close(conn);
		send(cli, "from ", 5, 0);
		usleep(20000);
		send(cli, "child", 5, 0);
		_exit(0);
	}
	close(cli);
	n = recv(conn, buf, sizeof buf, MSG_WAITALL);
	SHOW("waitall", "%.*s", (int)n, buf);
	waitpid(pid, NULL, 0);
	struct sockaddr_un missing = {.sun_family = AF_UNIX};
	strcpy(missing.sun_path, "nosock");
	RET("connect.missing", connect(again, (struct sockaddr *)&missing, sizeof missing));
	strcpy(missing.sun_path, "sock");
	RET("unlink.sock", unlink("sock"));
	RET("connect.unlinked", connect(again, (struct sockaddr *)&missing, sizeof missing));

	/* Abstract names. */
	int abs = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un ab = {.sun_family = AF_UNIX};
	int alen = snprintf(ab.sun_path + 1, sizeof ab.sun_path - 1, "conform-%d", getpid()) + 1;
	socklen_t ablen = offsetof(struct sockaddr_un, sun_path) + alen;
	RET("bind.abstract", bind(abs, (struct sockaddr *)&ab, ablen));
	RET("listen.abstract", listen(abs, 1));
	int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("connect.abstract", connect(c2, (struct sockaddr *)&ab, ablen));
	len = sizeof peer;
	RET("getpeername.abstract", getpeername(c2, (struct sockaddr *)&peer, &len));
	SHOW("abstract.len.matches", "%d", len == ablen);
	close(abs);
	int c3 = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("connect.abstract.closed", connect(c3, (struct sockaddr *)&ab, ablen));
	RET("bind.badfamily", bind(c3, (struct sockaddr *)&a, 1));
	return 0;
}
