/* close(2) of a descriptor another thread is blocked on: the blocked call
 * holds the file, so close does not wake it; it returns what comes
 * afterwards, and the file is released only when it returns. Read on a
 * pipe, accept on a Unix socket, epoll_wait on an epoll instance. */
#include "../conform.h"
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

static int fd;
static long ret;
static int err;
static char buf[32];

/* blocked gives a thread time to block in its call before it is closed
 * under it. */
static void blocked(void) { usleep(100 * 1000); }

static void *do_read(void *arg) {
	ret = read(fd, buf, sizeof buf);
	err = errno;
	return NULL;
}

static void *do_accept(void *arg) {
	ret = accept(fd, NULL, NULL);
	err = errno;
	return NULL;
}

static void *do_epoll_wait(void *arg) {
	struct epoll_event ev;
	ret = epoll_wait(fd, &ev, 1, 5000);
	err = errno;
	return NULL;
}

static void show(const char *name) {
	if (ret == -1)
		SHOW(name, "-1 %s", strerrorname_np(err));
	else
		SHOW(name, "%s", ret >= 0 ? "ok" : "?");
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	pthread_t th;

	/* read on a pipe's read end */
	int p[2];
	pipe(p);
	fd = p[0];
	pthread_create(&th, NULL, do_read, NULL);
	blocked();
	RET("read.close", close(p[0]));
	RET("read.write.while.held", write(p[1], "after close", 11));
	pthread_join(th, NULL);
	RET("read.returned", ret);
	SHOW("read.data", "%.*s", ret > 0 ? (int)ret : 0, buf);
	RET("read.write.after.release", write(p[1], "x", 1));
	close(p[1]);

	/* accept on a listening Unix socket */
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "close_blocked.sock"};
	unlink(sa.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("accept.bind", bind(l, (struct sockaddr *)&sa, sizeof sa));
	RET("accept.listen", listen(l, 4));
	fd = l;
	pthread_create(&th, NULL, do_accept, NULL);
	blocked();
	RET("accept.close", close(l));
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("accept.connect.while.held", connect(c, (struct sockaddr *)&sa, sizeof sa));
	pthread_join(th, NULL);
	show("accept.returned");
	if (ret >= 0)
		close(ret);
	close(c);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("accept.connect.after.release", connect(c, (struct sockaddr *)&sa, sizeof sa));
	close(c);
	unlink(sa.sun_path);

	/* epoll_wait on an epoll instance watching a pipe */
	pipe(p);
	int e = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	RET("epoll.ctl", epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev));
	fd = e;
	pthread_create(&th, NULL, do_epoll_wait, NULL);
	blocked();
	RET("epoll.close", close(e));
	RET("epoll.write", write(p[1], "x", 1));
	pthread_join(th, NULL);
	RET("epoll.returned", ret);
	RET("epoll.wait.after.release", epoll_wait(e, &ev, 1, 0));
	return 0;
}
