/* Control messages on Unix sockets: SCM_RIGHTS over datagrams (and with
 * MSG_PEEK, which duplicates them), SCM_CREDENTIALS with SO_PASSCRED on
 * datagram, stream and seqpacket sockets, credentials a sender gives,
 * a control buffer too small (MSG_CTRUNC), SO_PEERCRED of pairs and of a
 * connected datagram socket, and SO_PASSCRED's autobind. */
#include "../conform.h"
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static int option(int fd, int name) {
	int v = -1;
	socklen_t len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0)
		return -errno;
	return v;
}

static long send_ctl(int sock, const char *data, int level, int type, const void *payload, size_t len) {
	char control[CMSG_SPACE(64)];
	memset(control, 0, sizeof control);
	struct iovec iov = {(void *)data, strlen(data)};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = control;
	m.msg_controllen = CMSG_SPACE(len);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), payload, len);
	return sendmsg(sock, &m, 0);
}

/* show_recv receives one message with a control buffer of controllen
 * bytes and prints what came: length, flags, each control message. */
static void show_recv(const char *what, int sock, size_t controllen, int flags) {
	char data[64], control[256];
	memset(control, 0, sizeof control);
	struct iovec iov = {data, sizeof data};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = controllen ? control : NULL;
	m.msg_controllen = controllen;
	errno = 0;
	long n = recvmsg(sock, &m, flags);
	if (n < 0) {
		SHOW(what, "-1 %s", strerrorname_np(errno));
		return;
	}
	SHOW(what, "%ld flags %#x controllen %d", n, m.msg_flags & (MSG_TRUNC | MSG_CTRUNC), (int)m.msg_controllen);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred u;
			memcpy(&u, CMSG_DATA(c), sizeof u);
			SHOW(what, "  SCM_CREDENTIALS len %d mypid %d uid %d gid %d", (int)c->cmsg_len, u.pid == getpid(), (int)u.uid, (int)u.gid);
		} else if (c->cmsg_type == SCM_RIGHTS) {
			int fds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			SHOW(what, "  SCM_RIGHTS len %d fds %d", (int)c->cmsg_len, fds);
			for (int i = 0; i < fds; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
				char b[16] = {0};
				long k = read(fd, b, sizeof b - 1);
				SHOW(what, "  fd %d reads %ld %s", i, k, b);
				close(fd);
			}
		} else {
			SHOW(what, "  level %d type %d len %d", c->cmsg_level, c->cmsg_type, (int)c->cmsg_len);
		}
	}
}

int main(void) {
	int sv[2], p[2];
	char buf[64];
	RET("socketpair", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));

	/* SCM_RIGHTS over a datagram pair: a pipe's read end. */
	pipe(p);
	write(p[1], "through", 7);
	close(p[1]);
	RET("send.rights", send_ctl(sv[0], "fd", SOL_SOCKET, SCM_RIGHTS, &p[0], sizeof(int)));
	close(p[0]);
	show_recv("recv.rights.peek", sv[1], 256, MSG_PEEK);
	show_recv("recv.rights", sv[1], 256, 0);
	pipe(p);
	write(p[1], "lost", 4);
	close(p[1]);
	RET("send.rights.small", send_ctl(sv[0], "fd", SOL_SOCKET, SCM_RIGHTS, &p[0], sizeof(int)));
	close(p[0]);
	show_recv("recv.rights.ctrunc", sv[1], 8, 0);
	RET("send.rights.notfd", send_ctl(sv[0], "x", SOL_SOCKET, SCM_RIGHTS, &(int){99}, sizeof(int)));
	RET("send.badtype", send_ctl(sv[0], "x", SOL_SOCKET, 77, &(int){0}, sizeof(int)));
	RET("send.otherlevel", send_ctl(sv[0], "ok", 0 /* SOL_IP */, 77, &(int){0}, sizeof(int)));
	show_recv("recv.otherlevel", sv[1], 256, 0);

	/* No SO_PASSCRED: no credentials. */
	send(sv[0], "plain", 5, 0);
	show_recv("recv.nopasscred", sv[1], 256, 0);
	SHOW("SO_PASSCRED.default", "%d", option(sv[1], SO_PASSCRED));
	int on = 1;
	RET("SO_PASSCRED.set", setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on));
	SHOW("SO_PASSCRED.get", "%d", option(sv[1], SO_PASSCRED));
	send(sv[0], "cred", 4, 0);
	show_recv("recv.passcred", sv[1], 256, 0);
	/* Credentials cut short by a small control buffer are not printed:
	 * qemu-user receives them into a buffer of its own and drops Linux's
	 * MSG_CTRUNC when it copies them back. */
	struct ucred mine = {getpid(), getuid(), getgid()};
	RET("send.creds", send_ctl(sv[0], "given", SOL_SOCKET, SCM_CREDENTIALS, &mine, sizeof mine));
	show_recv("recv.creds", sv[1], 256, 0);
	struct ucred invalid = {getpid(), -1, getgid()};
	RET("send.creds.invalid", send_ctl(sv[0], "x", SOL_SOCKET, SCM_CREDENTIALS, &invalid, sizeof invalid));
	RET("send.creds.short", send_ctl(sv[0], "x", SOL_SOCKET, SCM_CREDENTIALS, &mine, 8));
	/* Both at once: credentials come first. */
	pipe(p);
	write(p[1], "both", 4);
	close(p[1]);
	send_ctl(sv[0], "both", SOL_SOCKET, SCM_RIGHTS, &p[0], sizeof(int));
	close(p[0]);
	show_recv("recv.both", sv[1], 256, 0);

	struct ucred cred;
	socklen_t len = sizeof cred;
	RET("pair.SO_PEERCRED", getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &len));
	SHOW("pair.SO_PEERCRED.value", "%d %d %d", cred.pid == getpid(), (int)cred.uid, (int)cred.gid);
	len = sizeof buf;
	RET("SO_PEERSEC", getsockopt(sv[0], SOL_SOCKET, SO_PEERSEC, buf, &len));
	close(sv[0]);
	close(sv[1]);

	/* A connected datagram socket has no peer credentials; SO_PASSCRED
	 * autobinds it when it connects. */
	int r = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path + 1, "jiege-scm");
	socklen_t alen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen("jiege-scm");
	bind(r, (struct sockaddr *)&a, alen);
	int c = socket(AF_UNIX, SOCK_DGRAM, 0);
	setsockopt(c, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
	RET("connect", connect(c, (struct sockaddr *)&a, alen));
	struct sockaddr_un self;
	socklen_t selflen = sizeof self;
	getsockname(c, (struct sockaddr *)&self, &selflen);
	SHOW("passcred.autobind.len", "%d", (int)selflen);
	len = sizeof cred;
	RET("connected.SO_PEERCRED", getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	SHOW("connected.SO_PEERCRED.value", "%d %d %d", (int)cred.pid, (int)cred.uid, (int)cred.gid);
	/* The sender's SO_PASSCRED attaches credentials the receiver sees
	 * once it asks. */
	send(c, "sender", 6, 0);
	RET("r.SO_PASSCRED", setsockopt(r, SOL_SOCKET, SO_PASSCRED, &on, sizeof on));
	show_recv("recv.sender.passcred", r, 256, 0);
	int off = 0;
	setsockopt(c, SOL_SOCKET, SO_PASSCRED, &off, sizeof off);
	setsockopt(r, SOL_SOCKET, SO_PASSCRED, &off, sizeof off);
	send(c, "neither", 7, 0);
	setsockopt(r, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
	show_recv("recv.neither", r, 256, 0);
	close(c);
	close(r);

	/* Stream and seqpacket pairs with SO_PASSCRED. */
	int types[2] = {SOCK_STREAM, SOCK_SEQPACKET};
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "seqpacket" : "stream";
		socketpair(AF_UNIX, types[i], 0, sv);
		setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
		send(sv[0], "abc", 3, 0);
		char what[64];
		snprintf(what, sizeof what, "%s.passcred", name);
		show_recv(what, sv[1], 256, 0);
		write(sv[0], "write", 5);
		snprintf(what, sizeof what, "%s.passcred.write", name);
		show_recv(what, sv[1], 256, 0);
		len = sizeof cred;
		getsockopt(sv[1], SOL_SOCKET, SO_PEERCRED, &cred, &len);
		SHOW(what, "SO_PEERCRED %d %d %d", cred.pid == getpid(), (int)cred.uid, (int)cred.gid);
		pipe(p);
		write(p[1], name, strlen(name));
		close(p[1]);
		send_ctl(sv[0], "xy", SOL_SOCKET, SCM_RIGHTS, &p[0], sizeof(int));
		close(p[0]);
		snprintf(what, sizeof what, "%s.rights.peek", name);
		show_recv(what, sv[1], 256, MSG_PEEK);
		snprintf(what, sizeof what, "%s.rights", name);
		show_recv(what, sv[1], 256, 0);
		close(sv[0]);
		close(sv[1]);
	}
	return 0;
}
