/* TCP over the loopback interface: a server and a client in one program
 * on 127.0.0.1, data both ways, end of stream, a refused connection, a
 * non-blocking connect finished through poll and SO_ERROR. Ports are
 * chosen by bind(port 0) and never printed. */
#include "../conform.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

static struct sockaddr_in loopback(unsigned short port) {
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* listener returns a socket listening on 127.0.0.1 and its port. */
static int listener(unsigned short *port) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loopback(0);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 8) < 0)
		return -1;
	socklen_t len = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &len);
	*port = ntohs(a.sin_port);
	return s;
}

int main(void) {
	unsigned short port;
	int ls = listener(&port);
	SHOW("listener", "%d", ls >= 0);

	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in to = loopback(port);
	RET("connect", connect(c, (struct sockaddr *)&to, sizeof to));
	struct sockaddr_in peer;
	socklen_t plen = sizeof peer;
	int s = accept(ls, (struct sockaddr *)&peer, &plen);
	SHOW("accept", "%d", s >= 0);
	SHOW("accept peer", "%s len %d", inet_ntoa(peer.sin_addr), (int)plen);
	struct sockaddr_in local;
	socklen_t llen = sizeof local;
	getsockname(c, (struct sockaddr *)&local, &llen);
	SHOW("client addr", "%s", inet_ntoa(local.sin_addr));
	SHOW("peer port is client port", "%d", peer.sin_port == local.sin_port);

	RET("send", send(c, "ping", 4, 0));
	char buf[64] = {0};
	RET("recv peek", recv(s, buf, sizeof buf, MSG_PEEK));
	RET("recv", recv(s, buf, sizeof buf, 0));
	SHOW("data", "%s", buf);
	RET("write back", write(s, "pong!", 5));
	memset(buf, 0, sizeof buf);
	RET("read", read(c, buf, sizeof buf));
	SHOW("data back", "%s", buf);
	RET("recv dontwait empty", recv(c, buf, sizeof buf, MSG_DONTWAIT));

	RET("shutdown wr", shutdown(c, SHUT_WR));
	RET("server reads eof", read(s, buf, sizeof buf));
	RET("send after shutdown", send(c, "x", 1, MSG_NOSIGNAL));
	RET("server still writes", write(s, "late", 4));
	memset(buf, 0, sizeof buf);
	RET("client still reads", read(c, buf, sizeof buf));
	RET("shutdown bad how", shutdown(c, 7));
	close(s);
	RET("client eof", read(c, buf, sizeof buf));
	close(c);

	/* A port with no listener: refused at once on loopback. */
	int r = socket(AF_INET, SOCK_STREAM, 0);
	close(ls);
	RET("connect refused", connect(r, (struct sockaddr *)&to, sizeof to));
	close(r);

	/* Non-blocking connect: EINPROGRESS or done, then poll and SO_ERROR. */
	ls = listener(&port);
	to = loopback(port);
	int nb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int rc = connect(nb, (struct sockaddr *)&to, sizeof to);
	SHOW("nonblocking connect", "%s", rc == 0 || errno == EINPROGRESS ? "ok" : strerrorname_np(errno));
	struct pollfd pfd = {nb, POLLOUT, 0};
	RET("poll writable", poll(&pfd, 1, 5000));
	SHOW("revents", "%#x", pfd.revents);
	int err = -1;
	socklen_t elen = sizeof err;
	RET("SO_ERROR", getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &elen));
	SHOW("SO_ERROR value", "%d len %d", err, (int)elen);
	s = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
	SHOW("accept4", "%d", s >= 0);
	fcntl(ls, F_SETFL, O_NONBLOCK);
	RET("accept none waiting", accept(ls, NULL, NULL));
	close(s);
	close(nb);

	/* Non-blocking connect refused: SO_ERROR says so once. */
	close(ls);
	nb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	rc = connect(nb, (struct sockaddr *)&to, sizeof to);
	SHOW("refused nonblocking", "%s", rc == 0 ? "0" : strerrorname_np(errno));
	pfd.fd = nb;
	pfd.events = POLLOUT;
	RET("poll refused", poll(&pfd, 1, 5000));
	err = -1;
	getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &elen);
	SHOW("SO_ERROR refused", "%s", err ? strerrorname_np(err) : "0");
	getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &elen);
	SHOW("SO_ERROR cleared", "%d", err);
	close(nb);

	/* shutdown on sockets without a connection; SHUT_RD; SO_LINGER 0. */
	int u = socket(AF_INET, SOCK_STREAM, 0);
	RET("shutdown unconnected", shutdown(u, SHUT_RDWR));
	ls = listener(&port);
	RET("shutdown listening", shutdown(ls, SHUT_RD));
	close(ls);
	close(u);
	ls = listener(&port);
	to = loopback(port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&to, sizeof to);
	s = accept(ls, NULL, NULL);
	RET("shutdown rd", shutdown(c, SHUT_RD));
	RET("read after shutdown rd", read(c, buf, sizeof buf));
	RET("write after shutdown rd", write(c, "w", 1));
	RET("peer reads", read(s, buf, 1));
	struct linger hard = {1, 0};
	RET("SO_LINGER 0", setsockopt(s, SOL_SOCKET, SO_LINGER, &hard, sizeof hard));
	close(s);
	usleep(100000);
	RET("read after reset", read(c, buf, sizeof buf));
	RET("read after reset again", read(c, buf, sizeof buf));
	close(c);
	close(ls);

	/* Binding the same port twice. */
	ls = listener(&port);
	int b = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in same = loopback(port);
	RET("bind in use", bind(b, (struct sockaddr *)&same, sizeof same));
	struct sockaddr_in other = {0};
	other.sin_family = AF_INET;
	other.sin_addr.s_addr = inet_addr("192.0.2.1");
	RET("bind foreign address", bind(b, (struct sockaddr *)&other, sizeof other));
	close(b);
	close(ls);
	return 0;
}
