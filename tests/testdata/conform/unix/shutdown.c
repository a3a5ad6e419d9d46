/* shutdown(2) on a Unix stream socket, as LTP's shutdown01 checks it: a
 * client whose connection waits unaccepted in the listener's backlog, and
 * one whose connection was accepted. After SHUT_RD a receive returns 0 at
 * once (an alarm would interrupt one that blocks), and a send still goes;
 * after SHUT_WR a receive has nothing yet and a send fails with EPIPE.
 * Bytes queued before SHUT_RD are still read, on Linux as here. */
#include "../conform.h"
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

static void interrupted(int sig) { (void)sig; }

static struct sockaddr_un addr = {AF_UNIX, "shutdown.sock"};

static int client(void) {
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&addr, sizeof addr);
	return c;
}

static void check(const char *name, int c, int how) {
	char buf[4] = {0}, line[80];
	snprintf(line, sizeof line, "%s shutdown", name);
	RET(line, shutdown(c, how));
	struct pollfd pfd = {c, POLLIN | POLLOUT | POLLRDHUP, 0};
	snprintf(line, sizeof line, "%s poll", name);
	RET(line, poll(&pfd, 1, 0));
	SHOW(line, "%#x", pfd.revents);
	alarm(2);
	snprintf(line, sizeof line, "%s recv", name);
	RET(line, recv(c, buf, sizeof buf, how == SHUT_WR ? MSG_DONTWAIT : 0));
	alarm(0);
	snprintf(line, sizeof line, "%s recv again", name);
	RET(line, recv(c, buf, sizeof buf, MSG_DONTWAIT));
	snprintf(line, sizeof line, "%s send", name);
	RET(line, send(c, buf, sizeof buf, MSG_NOSIGNAL));
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = interrupted;
	sigaction(SIGALRM, &sa, NULL);
	unlink(addr.sun_path);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(ls, (struct sockaddr *)&addr, sizeof addr);
	listen(ls, 10);

	int hows[] = {SHUT_RD, SHUT_WR, SHUT_RDWR};
	const char *unaccepted[] = {"unaccepted SHUT_RD", "unaccepted SHUT_WR", "unaccepted SHUT_RDWR"};
	for (int i = 0; i < 3; i++) {
		int c = client();
		check(unaccepted[i], c, hows[i]);
		close(c);
	}

	/* A fresh listener: the closed clients above wait in this one's backlog. */
	close(ls);
	unlink(addr.sun_path);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(ls, (struct sockaddr *)&addr, sizeof addr);
	listen(ls, 10);

	const char *names[] = {"accepted SHUT_RD", "accepted SHUT_WR", "accepted SHUT_RDWR"};
	for (int i = 0; i < 3; i++) {
		int c = client(), s = accept(ls, NULL, NULL);
		if (i == 0)
			send(s, "data", 4, 0);
		check(names[i], c, hows[i]);
		char buf[8];
		RET("peer recv", recv(s, buf, sizeof buf, MSG_DONTWAIT));
		RET("peer send", send(s, buf, 1, MSG_NOSIGNAL));
		close(c);
		close(s);
	}
	close(ls);
	unlink(addr.sun_path);
	return 0;
}
