/* Full Unix datagram queues: a receiver holds max_dgram_qlen + 1
 * datagrams from senders it is not connected to (EAGAIN, then poll says
 * not writable until it reads); a socketpair stops at SO_SNDBUF; blocked
 * senders wake when the receiver reads; eight processes send to one
 * receiver (a syslog daemon and its clients) and every datagram arrives
 * whole and in each sender's order; SO_RCVTIMEO and SO_SNDTIMEO end a
 * wait with EAGAIN. */
#include "../conform.h"
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#define SENDERS 8
#define EACH 40

static socklen_t path_addr(struct sockaddr_un *a, const char *path) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static int writable(int fd) {
	struct pollfd p = {fd, POLLOUT, 0};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

int main(void) {
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "log.sock");
	char buf[512];
	unlink("log.sock");
	int r = socket(AF_UNIX, SOCK_DGRAM, 0);
	RET("bind", bind(r, (struct sockaddr *)&a, alen));

	/* A receiver's queue: 11 datagrams, then EAGAIN. */
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int n = 0, err = 0;
	for (; n < 100; n++) {
		if (sendto(s, "msg", 3, 0, (struct sockaddr *)&a, alen) < 0) {
			err = errno;
			break;
		}
	}
	SHOW("queue.sent", "%d", n);
	SHOW("queue.errno", "%s", strerrorname_np(err));
	RET("connect", connect(s, (struct sockaddr *)&a, alen));
	SHOW("queue.full.writable", "%d", writable(s));
	RET("recv.one", recv(r, buf, sizeof buf, 0));
	SHOW("queue.room.writable", "%d", writable(s));
	RET("send.room", send(s, "msg", 3, 0));
	RET("send.full.again", send(s, "msg", 3, 0));

	/* A blocked sender wakes when the receiver reads. */
	pid_t child = fork();
	if (child == 0) {
		int b = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (sendto(b, "blocked", 7, 0, (struct sockaddr *)&a, alen) != 7)
			_exit(1);
		_exit(0);
	}
	usleep(200000);
	int status = -1;
	SHOW("blocked.still", "%d", waitpid(child, &status, WNOHANG));
	for (int i = 0; i < 11; i++)
		recv(r, buf, sizeof buf, 0);
	waitpid(child, &status, 0);
	SHOW("blocked.woken", "%d", WEXITSTATUS(status));
	RET("recv.blocked", recv(r, buf, sizeof buf, 0));
	RET("recv.drained", recv(r, buf, sizeof buf, MSG_DONTWAIT));
	close(s);

	/* SO_RCVTIMEO: an empty queue's wait ends with EAGAIN. */
	struct timeval tv = {0, 100000};
	RET("SO_RCVTIMEO", setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
	struct timeval got = {9, 9};
	socklen_t gotlen = sizeof got;
	RET("SO_RCVTIMEO.get", getsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &got, &gotlen));
	SHOW("SO_RCVTIMEO.value", "%ld %ld %d", (long)got.tv_sec, (long)got.tv_usec, (int)gotlen);
	RET("recv.timeout", recv(r, buf, sizeof buf, 0));
	struct timeval bad = {0, 1000000};
	RET("SO_RCVTIMEO.EDOM", setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &bad, sizeof bad));
	RET("SO_RCVTIMEO.short", setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &bad, 4));
	struct timeval zero = {0, 0};
	setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &zero, sizeof zero);

	/* A socketpair stops at SO_SNDBUF, not at the queue's length. */
	int sv[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	int v = 4608;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
	int flags = MSG_DONTWAIT;
	n = 0, err = 0;
	for (; n < 100000; n++) {
		if (send(sv[0], buf, 100, flags) < 0) {
			err = errno;
			break;
		}
	}
	SHOW("pair.more.than.queue", "%d", n > 11);
	SHOW("pair.errno", "%s", strerrorname_np(err));
	SHOW("pair.full.writable", "%d", writable(sv[0]));
	RET("SO_SNDTIMEO", setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv));
	RET("send.timeout", send(sv[0], buf, 100, 0));
	int drained = 0;
	while (recv(sv[1], buf, sizeof buf, MSG_DONTWAIT) == 100)
		drained++;
	SHOW("pair.drained.all", "%d", drained == n);
	SHOW("pair.drained.writable", "%d", writable(sv[0]));
	close(sv[0]);
	close(sv[1]);

	/* Many senders, one receiver. */
	for (int i = 0; i < SENDERS; i++) {
		if (fork() == 0) {
			int c = socket(AF_UNIX, SOCK_DGRAM, 0);
			for (int j = 0; j < EACH; j++) {
				char msg[64];
				int len = snprintf(msg, sizeof msg, "%d %d %*s", i, j, (i * 7 + j) % 40, "");
				if (sendto(c, msg, len, 0, (struct sockaddr *)&a, alen) != len)
					_exit(1);
			}
			_exit(0);
		}
	}
	int next[SENDERS] = {0}, bad_order = 0, bad_len = 0;
	for (int k = 0; k < SENDERS * EACH; k++) {
		long len = recv(r, buf, sizeof buf - 1, 0);
		buf[len < 0 ? 0 : len] = 0;
		int i = -1, j = -1;
		sscanf(buf, "%d %d", &i, &j);
		if (i < 0 || i >= SENDERS || j != next[i]) {
			bad_order++;
			continue;
		}
		char want[64];
		if (len != snprintf(want, sizeof want, "%d %d %*s", i, j, (i * 7 + j) % 40, ""))
			bad_len++;
		next[i]++;
	}
	int ok = 0;
	while (wait(&status) > 0)
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	SHOW("senders.ok", "%d", ok);
	SHOW("senders.bad.order", "%d", bad_order);
	SHOW("senders.bad.len", "%d", bad_len);
	RET("senders.drained", recv(r, buf, sizeof buf, MSG_DONTWAIT));
	unlink("log.sock");
	return 0;
}
