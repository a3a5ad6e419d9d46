/* A Unix stream or seqpacket peer that closes with data unread resets the
 * connection: the survivor reads ECONNRESET once (poll says POLLERR,
 * SO_ERROR says it), then end of file; so does the client of a listener
 * closed before it accepted the connection. */
#include "../conform.h"
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static short revents(int fd) {
	struct pollfd p = {fd, POLLIN | POLLOUT, 0};
	poll(&p, 1, 0);
	return p.revents;
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	char buf[16];
	int types[2] = {SOCK_STREAM, SOCK_SEQPACKET};
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "seqpacket" : "stream";
		char what[64];
		int sv[2];
		socketpair(AF_UNIX, types[i], 0, sv);
		send(sv[0], "unread", 6, 0);
		close(sv[1]);
		snprintf(what, sizeof what, "%s.poll", name);
		SHOW(what, "%#x", revents(sv[0]));
		snprintf(what, sizeof what, "%s.recv", name);
		RET(what, recv(sv[0], buf, sizeof buf, 0));
		snprintf(what, sizeof what, "%s.recv.again", name);
		RET(what, recv(sv[0], buf, sizeof buf, 0));
		snprintf(what, sizeof what, "%s.send", name);
		RET(what, send(sv[0], "x", 1, 0));
		close(sv[0]);

		socketpair(AF_UNIX, types[i], 0, sv);
		send(sv[0], "unread", 6, 0);
		close(sv[1]);
		int err = -1;
		socklen_t len = sizeof err;
		getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &err, &len);
		snprintf(what, sizeof what, "%s.SO_ERROR", name);
		SHOW(what, "%s", err ? strerrorname_np(err) : "0");
		snprintf(what, sizeof what, "%s.recv.after.SO_ERROR", name);
		RET(what, recv(sv[0], buf, sizeof buf, 0));
		close(sv[0]);

		struct sockaddr_un a = {.sun_family = AF_UNIX};
		snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "jiege-reset-%d", i);
		socklen_t alen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1);
		int l = socket(AF_UNIX, types[i], 0);
		bind(l, (struct sockaddr *)&a, alen);
		listen(l, 1);
		int c = socket(AF_UNIX, types[i], 0);
		connect(c, (struct sockaddr *)&a, alen);
		close(l);
		snprintf(what, sizeof what, "%s.unaccepted.recv", name);
		RET(what, recv(c, buf, sizeof buf, 0));
		snprintf(what, sizeof what, "%s.unaccepted.recv.again", name);
		RET(what, recv(c, buf, sizeof buf, 0));
		close(c);
	}
	return 0;
}
