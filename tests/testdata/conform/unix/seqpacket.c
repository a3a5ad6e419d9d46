/* Unix seqpacket sockets: a server that binds, listens and accepts a
 * client in another process; message boundaries and truncation; the
 * peer's credentials; a peer that closes (end of file, or ECONNRESET when
 * it left messages unread); socketpair; a stream client refused. */
#include "../conform.h"
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

static int sigpipes;
static void on_sigpipe(int sig) { (void)sig; sigpipes++; }

static socklen_t path_addr(struct sockaddr_un *a, const char *path) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static int option(int fd, int name) {
	int v = -1;
	socklen_t len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0)
		return -errno;
	return v;
}

static short revents(int fd) {
	struct pollfd p = {fd, POLLIN | POLLOUT | POLLRDHUP, 0};
	poll(&p, 1, 0);
	return p.revents;
}

int main(void) {
	signal(SIGPIPE, on_sigpipe);
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "seq.sock");
	char buf[256];
	unlink("seq.sock");

	int l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	SHOW("SO_TYPE", "%d", option(l, SO_TYPE));
	SHOW("unconnected.poll", "%#x", revents(l));
	RET("send.unconnected", send(l, "x", 1, 0));
	RET("listen.unbound", listen(l, 5));
	RET("bind", bind(l, (struct sockaddr *)&a, alen));
	RET("listen", listen(l, 5));
	SHOW("SO_ACCEPTCONN", "%d", option(l, SO_ACCEPTCONN));

	int st = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("stream.connect", connect(st, (struct sockaddr *)&a, alen));
	close(st);

	pid_t child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (connect(c, (struct sockaddr *)&a, alen) != 0)
			_exit(1);
		struct ucred cred;
		socklen_t len = sizeof cred;
		getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len);
		/* The listener's process made the peer. */
		if (cred.pid != getppid() || len != sizeof cred)
			_exit(2);
		send(c, "first", 5, 0);
		send(c, "second message", 14, 0);
		send(c, "", 0, 0);
		send(c, "fourth", 6, MSG_EOR);
		sendto(c, "fifth", 5, 0, (struct sockaddr *)&a, alen);
		/* Wait for the server's word, then close with its reply unread. */
		recv(c, buf, sizeof buf, 0);
		_exit(0);
	}
	struct sockaddr_un peer;
	socklen_t peerlen = sizeof peer;
	int s = accept(l, (struct sockaddr *)&peer, &peerlen);
	SHOW("accept", "%d", s >= 0);
	SHOW("accept.peerlen", "%d", (int)peerlen);
	struct ucred cred;
	socklen_t len = sizeof cred;
	RET("SO_PEERCRED", getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	SHOW("SO_PEERCRED.pid", "%d", cred.pid == child);
	SHOW("SO_PEERCRED.uid", "%d", cred.uid == geteuid());
	SHOW("SO_PEERCRED.len", "%d", (int)len);
	RET("recv.first", recv(s, buf, sizeof buf, 0));
	RET("recv.trunc", recv(s, buf, 6, 0));
	SHOW("recv.trunc.data", "%.6s", buf);
	RET("recv.empty", recv(s, buf, sizeof buf, 0));
	struct iovec iov = {buf, 3};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	RET("recvmsg.trunc", recvmsg(s, &m, MSG_PEEK));
	SHOW("recvmsg.trunc.flags", "%#x", m.msg_flags & MSG_TRUNC);
	RET("recv.MSG_TRUNC", recv(s, buf, 3, MSG_TRUNC));
	RET("read.fifth", read(s, buf, sizeof buf));
	SHOW("poll.empty", "%#x", revents(s));
	RET("send.reply", send(s, "go", 2, 0));
	RET("send.unread", send(s, "unread", 6, 0));
	int status;
	waitpid(child, &status, 0);
	SHOW("child", "%d", WEXITSTATUS(status));
	SHOW("poll.after.close", "%#x", revents(s));
	RET("recv.reset", recv(s, buf, sizeof buf, 0));
	RET("recv.eof", recv(s, buf, sizeof buf, 0));
	RET("recv.eof.dontwait", recv(s, buf, sizeof buf, MSG_DONTWAIT));
	RET("send.closed", send(s, "x", 1, 0));
	SHOW("sigpipes", "%d", sigpipes);
	RET("send.closed.nosignal", send(s, "x", 1, MSG_NOSIGNAL));
	SHOW("sigpipes", "%d", sigpipes);
	close(s);

	/* A client that closes with nothing unread: just end of file. The
	 * accepted socket inherits the listener's SO_PASSCRED, not its
	 * SO_SNDBUF. */
	int one = 1, small = 10000;
	setsockopt(l, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	setsockopt(l, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		connect(c, (struct sockaddr *)&a, alen);
		send(c, "bye", 3, 0);
		_exit(0);
	}
	s = accept(l, NULL, NULL);
	SHOW("accepted.SO_PASSCRED", "%d", option(s, SO_PASSCRED));
	SHOW("accepted.SO_SNDBUF.default", "%d", option(s, SO_SNDBUF) == option(socket(AF_UNIX, SOCK_SEQPACKET, 0), SO_SNDBUF));
	waitpid(child, &status, 0);
	RET("recv.bye", recv(s, buf, sizeof buf, 0));
	RET("recv.bye.eof", recv(s, buf, sizeof buf, 0));
	close(s);
	close(l);
	unlink("seq.sock");

	/* socketpair: messages both ways, shutdown, the pair's credentials. */
	int sv[2];
	RET("socketpair", socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	len = sizeof cred;
	RET("pair.SO_PEERCRED", getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &len));
	SHOW("pair.SO_PEERCRED.pid", "%d", cred.pid == getpid());
	RET("pair.send", send(sv[0], "abc", 3, 0));
	RET("pair.send2", send(sv[0], "defg", 4, 0));
	RET("pair.recv", recv(sv[1], buf, sizeof buf, 0));
	RET("pair.recv2", recv(sv[1], buf, sizeof buf, 0));
	static char big[300000];
	RET("pair.EMSGSIZE", send(sv[0], big, sizeof big, 0));
	RET("pair.shutdown", shutdown(sv[0], SHUT_WR));
	RET("pair.send.shut", send(sv[0], "x", 1, MSG_NOSIGNAL));
	RET("pair.recv.shut", recv(sv[1], buf, sizeof buf, 0));
	SHOW("pair.poll.shut", "%#x", revents(sv[1]));
	RET("pair.write.big", write(sv[1], big, 100000));
	RET("pair.write.small", write(sv[1], "s", 1));
	RET("pair.read.big", read(sv[0], big, sizeof big));
	RET("pair.read.small", read(sv[0], big, sizeof big));
	RET("pair.back", send(sv[1], "back", 4, 0));
	RET("pair.back.recv", recv(sv[0], buf, sizeof buf, 0));
	return 0;
}
