/* Unix datagram sockets: binding to a path, an abstract name and by
 * autobind, sendto a named receiver and recvfrom its sender, message
 * boundaries, truncation with MSG_TRUNC, MSG_PEEK, FIONREAD, connect and
 * its errors, a peer that closes, socketpair, shutdown and the socket's
 * options. */
#include "../conform.h"
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

static socklen_t path_addr(struct sockaddr_un *a, const char *path) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path + 1, name);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

/* show_from prints the address a receive reported: its length and name. */
static void show_from(const char *what, struct sockaddr_un *a, socklen_t len) {
	int base = offsetof(struct sockaddr_un, sun_path);
	if ((int)len <= base)
		SHOW(what, "len %d unnamed", (int)len);
	else if (a->sun_path[0] == 0)
		SHOW(what, "len %d abstract %.*s", (int)len, (int)len - base - 1, a->sun_path + 1);
	else
		SHOW(what, "len %d path %s", (int)len, a->sun_path);
}

static int option(int fd, int name) {
	int v = -1;
	socklen_t len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0)
		return -errno;
	return v;
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_un a, from;
	socklen_t fromlen;
	char buf[256];
	unlink("dgram.sock");

	int r = socket(AF_UNIX, SOCK_DGRAM, 0);
	RET("bind.path", bind(r, (struct sockaddr *)&a, path_addr(&a, "dgram.sock")));
	RET("bind.again", bind(r, (struct sockaddr *)&a, path_addr(&a, "dgram2.sock")));
	SHOW("SO_TYPE", "%d", option(r, SO_TYPE));
	SHOW("SO_DOMAIN", "%d", option(r, SO_DOMAIN));
	SHOW("SO_PROTOCOL", "%d", option(r, SO_PROTOCOL));
	SHOW("SO_ACCEPTCONN", "%d", option(r, SO_ACCEPTCONN));
	RET("listen", listen(r, 1));
	RET("accept", accept(r, NULL, NULL));
	RET("recv.nonblock.empty", recv(r, buf, sizeof buf, MSG_DONTWAIT));

	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	RET("send.unconnected", send(s, "x", 1, 0));
	RET("getpeername.unconnected", getpeername(s, (struct sockaddr *)&from, &fromlen));
	path_addr(&a, "dgram.sock");
	RET("sendto.unbound", sendto(s, "one", 3, 0, (struct sockaddr *)&a, sizeof a));
	RET("sendto.two", sendto(s, "second", 6, 0, (struct sockaddr *)&a, sizeof a));
	RET("sendto.empty", sendto(s, "", 0, 0, (struct sockaddr *)&a, sizeof a));
	RET("sendto.long", sendto(s, "a long third message", 20, 0, (struct sockaddr *)&a, sizeof a));
	int pending = -1;
	RET("FIONREAD", ioctl(r, FIONREAD, &pending));
	SHOW("FIONREAD.value", "%d", pending);
	fromlen = sizeof from;
	RET("recvfrom.one", recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen));
	show_from("recvfrom.one.from", &from, fromlen);
	RET("recv.peek", recv(r, buf, 3, MSG_PEEK));
	RET("recv.peek.trunc", recv(r, buf, 3, MSG_PEEK | MSG_TRUNC));
	RET("recv.trunc.small", recv(r, buf, 3, 0));
	SHOW("recv.trunc.small.data", "%.3s", buf);
	RET("recv.empty", recv(r, buf, sizeof buf, 0));
	struct iovec iov = {buf, 4};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	RET("recvmsg.trunc", recvmsg(r, &m, MSG_TRUNC));
	SHOW("recvmsg.trunc.flags", "%#x", m.msg_flags);
	RET("recv.after.all", recv(r, buf, sizeof buf, MSG_DONTWAIT));

	/* A sender bound to an abstract name, then one autobound. */
	RET("bind.abstract", bind(s, (struct sockaddr *)&from, abstract_addr(&from, "jiege-dgram")));
	RET("sendto.named", sendto(s, "hi", 2, 0, (struct sockaddr *)&a, sizeof a));
	fromlen = sizeof from;
	RET("recvfrom.named", recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen));
	show_from("recvfrom.named.from", &from, fromlen);
	int t = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un family = {.sun_family = AF_UNIX};
	RET("bind.autobind", bind(t, (struct sockaddr *)&family, sizeof(sa_family_t)));
	struct sockaddr_un self;
	socklen_t selflen = sizeof self;
	RET("getsockname.autobind", getsockname(t, (struct sockaddr *)&self, &selflen));
	SHOW("autobind.len", "%d", (int)selflen);
	SHOW("autobind.abstract", "%d", self.sun_path[0] == 0);
	RET("bind.autobind.again", bind(t, (struct sockaddr *)&family, sizeof(sa_family_t)));
	RET("sendto.autobound", sendto(t, "auto", 4, 0, (struct sockaddr *)&a, sizeof a));
	fromlen = sizeof from;
	RET("recvfrom.autobound", recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen));
	SHOW("recvfrom.autobound.same", "%d", fromlen == selflen && memcmp(&from, &self, selflen) == 0);
	RET("sendto.abstract", sendto(t, "to s", 4, 0, (struct sockaddr *)&self, abstract_addr(&self, "jiege-dgram")));
	RET("recv.abstract", recv(s, buf, sizeof buf, 0));

	/* Errors of a destination. */
	struct sockaddr_un bad;
	RET("sendto.missing", sendto(s, "x", 1, 0, (struct sockaddr *)&bad, path_addr(&bad, "missing.sock")));
	RET("sendto.abstract.missing", sendto(s, "x", 1, 0, (struct sockaddr *)&bad, abstract_addr(&bad, "jiege-none")));
	int st = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink("stream.sock");
	bind(st, (struct sockaddr *)&bad, path_addr(&bad, "stream.sock"));
	listen(st, 1);
	RET("sendto.stream", sendto(s, "x", 1, 0, (struct sockaddr *)&bad, path_addr(&bad, "stream.sock")));
	RET("connect.stream", connect(s, (struct sockaddr *)&bad, path_addr(&bad, "stream.sock")));
	int st2 = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("stream.connect.dgram", connect(st2, (struct sockaddr *)&a, sizeof a));
	close(st);
	close(st2);
	unlink("stream.sock");
	static char big[300000];
	RET("sendto.EMSGSIZE", sendto(s, big, sizeof big, 0, (struct sockaddr *)&a, sizeof a));
	RET("sendto.max", sendto(s, big, 212992 - 32, 0, (struct sockaddr *)&a, sizeof a));
	RET("sendto.max.plus1", sendto(s, big, 212992 - 31, 0, (struct sockaddr *)&a, sizeof a));
	RET("recv.max", recv(r, big, sizeof big, 0));

	/* connect: the default destination, and the only sender received. */
	RET("connect", connect(s, (struct sockaddr *)&a, sizeof a));
	fromlen = sizeof from;
	RET("getpeername", getpeername(s, (struct sockaddr *)&from, &fromlen));
	show_from("getpeername.addr", &from, fromlen);
	RET("send.connected", send(s, "conn", 4, 0));
	RET("recv.connected", recv(r, buf, sizeof buf, 0));
	RET("r.connect.s", connect(r, (struct sockaddr *)&self, abstract_addr(&self, "jiege-dgram")));
	RET("t.sendto.r.taken", sendto(t, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
	RET("t.connect.r.taken", connect(t, (struct sockaddr *)&a, sizeof a));
	RET("s.send.r", send(s, "ok", 2, 0));
	RET("r.recv", recv(r, buf, sizeof buf, 0));
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	RET("r.disconnect", connect(r, &unspec, sizeof unspec));
	RET("r.disconnect.getpeername", getpeername(r, (struct sockaddr *)&from, &fromlen));
	RET("t.sendto.r.free", sendto(t, "free", 4, 0, (struct sockaddr *)&a, sizeof a));
	RET("r.recv.free", recv(r, buf, sizeof buf, 0));

	/* Shutdown of a datagram socket is its own. */
	int sh = socket(AF_UNIX, SOCK_DGRAM, 0);
	RET("shutdown.unconnected", shutdown(sh, SHUT_WR));
	RET("shutdown.send", sendto(sh, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
	RET("shutdown.bad", shutdown(sh, 7));
	close(sh);

	/* The receiver closes: a connected sender is refused once, then is
	 * no longer connected. */
	close(r);
	RET("send.closed.peer", send(s, "x", 1, 0));
	RET("send.after.refused", send(s, "x", 1, 0));
	RET("sendto.closed.path", sendto(t, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
	unlink("dgram.sock");
	close(s);
	close(t);

	/* socketpair: connected both ways; a closed end refuses sends, and
	 * the survivor's reads find nothing (no end of file for datagrams). */
	int sv[2];
	RET("socketpair", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	RET("pair.send", send(sv[0], "ab", 2, 0));
	RET("pair.send2", send(sv[0], "cde", 3, 0));
	RET("pair.recv", recv(sv[1], buf, sizeof buf, 0));
	RET("pair.recv2", recv(sv[1], buf, 1, 0));
	RET("pair.back", send(sv[1], "back", 4, 0));
	RET("pair.back.recv", read(sv[0], buf, sizeof buf));
	fromlen = sizeof from;
	RET("pair.getpeername", getpeername(sv[0], (struct sockaddr *)&from, &fromlen));
	SHOW("pair.getpeername.len", "%d", (int)fromlen);
	RET("pair.write", write(sv[0], "w", 1));
	RET("pair.read.w", read(sv[1], buf, sizeof buf));
	/* read and write move datagrams larger than a stream's chunk whole. */
	RET("pair.write.big", write(sv[0], big, 100000));
	RET("pair.write.64k", write(sv[0], big, 65536));
	RET("pair.write.small", write(sv[0], "s", 1));
	RET("pair.read.big", read(sv[1], big, sizeof big));
	RET("pair.read.64k", read(sv[1], big, sizeof big));
	struct iovec two[2] = {{big, 10}, {big + 10, sizeof big - 10}};
	RET("pair.readv.small", readv(sv[1], two, 2));
	close(sv[1]);
	RET("pair.send.closed", send(sv[0], "x", 1, 0));
	RET("pair.send.closed.again", send(sv[0], "x", 1, 0));
	RET("pair.recv.closed", recv(sv[0], buf, sizeof buf, MSG_DONTWAIT));
	close(sv[0]);

	/* SOCK_RAW is a datagram socket; the protocol is 0 or PF_UNIX. */
	int raw = socket(AF_UNIX, SOCK_RAW, 0);
	SHOW("raw.SO_TYPE", "%d", option(raw, SO_TYPE));
	RET("socket.PF_UNIX", socket(AF_UNIX, SOCK_DGRAM, PF_UNIX) >= 0);
	RET("socket.proto2", socket(AF_UNIX, SOCK_DGRAM, 2));
	RET("socket.RDM", socket(AF_UNIX, SOCK_RDM, 0));
	RET("socketpair.proto2", socketpair(AF_UNIX, SOCK_DGRAM, 2, sv));
	return 0;
}
