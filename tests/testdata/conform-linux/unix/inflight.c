/* Descriptors in flight over Unix sockets (sent with SCM_RIGHTS, not yet
 * received) are counted per user, the sender's, and a send that passes
 * any while the user has more in flight than the sender's RLIMIT_NOFILE
 * fails with ETOOMANYREFS unless it has CAP_SYS_RESOURCE or CAP_SYS_ADMIN
 * (root here). Receiving (with recvmsg or a plain read, not a peek),
 * closing a socket with queued descriptors and collecting closed cycles
 * give the count back. One message passes at most SCM_MAX_FD (253)
 * descriptors (EINVAL past it, over all its SCM_RIGHTS headers); Linux
 * 6.12 does not limit how deep sockets that carry sockets nest. */
#include "../../conform/conform.h"
#include <sys/resource.h>
#include <sys/socket.h>

static int pipefd[2];

/* pass_many sends one byte with SCM_RIGHTS headers of counts[i] copies of
 * fd each (nheaders of them). */
static long pass_many(int sock, int fd, const int *counts, int nheaders) {
	static char control[CMSG_SPACE(sizeof(int) * 300) * 2];
	memset(control, 0, sizeof control);
	struct iovec iov = {"x", 1};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = control;
	size_t len = 0;
	for (int h = 0; h < nheaders; h++)
		len += CMSG_SPACE(sizeof(int) * counts[h]);
	m.msg_controllen = len;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	for (int h = 0; h < nheaders; h++, c = CMSG_NXTHDR(&m, c)) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * counts[h]);
		for (int i = 0; i < counts[h]; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, 0);
}

/* pass sends one byte with n copies of fd. */
static long pass(int sock, int fd, int n) { return pass_many(sock, fd, &n, 1); }

/* take receives one message and closes the descriptors it brought; it
 * returns how many came, or -1. */
static long take(int sock, int flags) {
	char data[8], control[CMSG_SPACE(sizeof(int) * 16)];
	struct iovec iov = {data, sizeof data};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = control;
	m.msg_controllen = sizeof control;
	if (recvmsg(sock, &m, flags) < 0)
		return -1;
	long n = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, n++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
				close(fd);
			}
	return n;
}

/* fill sends one descriptor a message until a send fails, and prints how
 * many went and the failure. */
static void fill(const char *name, int sock) {
	int n = 0;
	while (n < 400 && pass(sock, pipefd[0], 1) == 1)
		n++;
	char what[64];
	snprintf(what, sizeof what, "%s.sent", name);
	SHOW(what, "%d %s", n, strerrorname_np(errno));
}

/* become makes the process user uid with an RLIMIT_NOFILE of nofile. */
static void become(uid_t uid, rlim_t nofile) {
	struct rlimit rl = {nofile, nofile};
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || setuid(uid) != 0)
		SHOW("become", "-1 %s", strerrorname_np(errno));
}

static void as_root(void) {
	struct rlimit rl = {20, 20};
	setrlimit(RLIMIT_NOFILE, &rl);
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	int n = 0;
	while (n < 60 && pass(s[0], pipefd[0], 1) == 1)
		n++;
	SHOW("root.sent", "%d", n);
}

static void one_user(void) {
	become(65534, 20);
	int s[2], d[2], q[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	socketpair(AF_UNIX, SOCK_DGRAM, 0, d);
	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, q);
	fill("stream", s[0]);
	RET("dgram.over", pass(d[0], pipefd[0], 1));
	RET("seqpacket.over", pass(q[0], pipefd[0], 1));
	RET("no-rights", send(d[0], "y", 1, 0));
	int none = 0;
	RET("empty-rights", pass_many(d[0], pipefd[0], &none, 1));
	RET("peek", take(s[1], MSG_PEEK));
	RET("after-peek", pass(d[0], pipefd[0], 1));
	RET("take", take(s[1], 0));
	RET("after-take", pass(d[0], pipefd[0], 1));
	RET("again", pass(d[0], pipefd[0], 1));
	char c;
	RET("read", read(s[1], &c, 1));
	RET("after-read", pass(d[0], pipefd[0], 1));
	RET("again", pass(d[0], pipefd[0], 1));
	for (int i = 0; i < 6; i++)
		take(s[1], 0);
	RET("ten-at-15", pass(q[0], pipefd[0], 10));
	RET("then-one", pass(q[0], pipefd[0], 1));
	close(s[0]);
	close(s[1]);
	fill("after-close", d[0]);
	close(q[0]);
	close(q[1]);
	fill("after-seqpacket-close", d[0]);
	close(d[0]);
	close(d[1]);
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	fill("all-closed", s[0]);
}

static int shared[2];

static void user_a(void) {
	become(65534, 20);
	fill("a", shared[0]);
}

static void user_b(void) {
	become(65534, 20);
	RET("b", pass(shared[0], pipefd[0], 1));
}

static void user_c(void) {
	become(65533, 20);
	RET("other-user", pass(shared[0], pipefd[0], 1));
}

static void user_d(void) {
	become(65534, 30);
	fill("higher-limit", shared[0]);
}

static void big_unprivileged(void) {
	become(65532, 20);
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	RET("253-at-0", pass(s[0], pipefd[0], 253));
	RET("then-one", pass(s[0], pipefd[0], 1));
}

static void nesting(void) {
	become(65531, 40);
	int pr[12][2];
	for (int i = 0; i < 12; i++)
		socketpair(AF_UNIX, SOCK_STREAM, 0, pr[i]);
	char name[32];
	for (int i = 1; i < 12; i++) {
		snprintf(name, sizeof name, "nest%d", i);
		RET(name, pass(pr[i][0], pr[i - 1][1], 1));
	}
	for (int i = 0; i < 12; i++)
		close(pr[i][0]), close(pr[i][1]);
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	fill("after-nesting", s[0]);
}

/* cycles makes sockets that carry themselves and closes them: only the
 * collector frees them, which Linux runs after the close (the send is
 * tried again once the collection had time). */
static void cycles(void) {
	become(65530, 20);
	int made = 0;
	for (int i = 0; i < 40; i++) {
		int s[2];
		socketpair(AF_UNIX, SOCK_STREAM, 0, s);
		if (pass(s[0], s[1], 1) != 1) {
			usleep(300000);
			if (pass(s[0], s[1], 1) != 1)
				SHOW("cycle", "%d -1 %s", i, strerrorname_np(errno));
		}
		close(s[0]);
		close(s[1]);
		made++;
	}
	SHOW("cycles", "%d", made);
	usleep(300000);
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	int n = 0;
	while (n < 400) {
		if (pass(s[0], pipefd[0], 1) != 1) {
			usleep(300000);
			if (pass(s[0], pipefd[0], 1) != 1)
				break;
		}
		n++;
	}
	SHOW("after-cycles", "%d %s", n, strerrorname_np(errno));
}

int main(void) {
	pipe(pipefd);
	run_child(as_root);
	run_child(one_user);

	socketpair(AF_UNIX, SOCK_STREAM, 0, shared);
	run_child(user_a);
	run_child(user_b);
	run_child(user_c);
	run_child(user_d);
	int n = 0;
	while (take(shared[1], MSG_DONTWAIT) >= 0)
		n++;
	SHOW("root.took", "%d", n);
	run_child(user_b);

	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	RET("253", pass(s[0], pipefd[0], 253));
	RET("254", pass(s[0], pipefd[0], 254));
	int split[2] = {200, 100};
	RET("200+100", pass_many(s[0], pipefd[0], split, 2));
	int fits[2] = {100, 153};
	RET("100+153", pass_many(s[0], pipefd[0], fits, 2));
	RET("bad-fd", pass(s[0], 999, 1));
	run_child(big_unprivileged);
	run_child(nesting);
	run_child(cycles);
	return 0;
}
