/* POSIX message queues: mq_open's errors and defaults, priorities,
 * O_NONBLOCK, timeouts, the descriptor as a file (poll, epoll, read,
 * fstat), unlink while open, permissions and limits checked as an
 * unprivileged user (qemu-user has no mq_notify:
 * conform-linux/ipc/mqnotify.c checks it). Names carry the pid: the
 * oracle's queues share the host's namespace. qemu-user leaves out a bad
 * mq_attr or priority pointer, so those faults are not checked. */
#include "../conform.h"
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char qname[64], other[64];

static void attr(const char *name, mqd_t q) {
	struct mq_attr a;
	if (mq_getattr(q, &a) == -1) {
		RET(name, -1);
		return;
	}
	SHOW(name, "flags %#lx maxmsg %ld msgsize %ld curmsgs %ld", a.mq_flags, a.mq_maxmsg, a.mq_msgsize, a.mq_curmsgs);
}

static int wait_status(pid_t pid) {
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void opens(void) {
	umask(022);
	RET("open.noent", mq_open(qname, O_RDWR));
	struct mq_attr a = {0, 0, 100, 0, {0}};
	RET("open.maxmsg0", mq_open(qname, O_RDWR | O_CREAT, 0600, &a));
	a.mq_maxmsg = 5, a.mq_msgsize = 0;
	RET("open.msgsize0", mq_open(qname, O_RDWR | O_CREAT, 0600, &a));
	a.mq_maxmsg = -1, a.mq_msgsize = 10;
	RET("open.maxmsg.negative", mq_open(qname, O_RDWR | O_CREAT, 0600, &a));
	RET("open.badattr", mq_open(qname, O_RDWR | O_CREAT, 0600, BAD));
	char longname[300];
	longname[0] = '/';
	memset(longname + 1, 'a', 256);
	longname[257] = 0;
	RET("open.name256", mq_open(longname, O_RDWR | O_CREAT, 0600, NULL));
	longname[256] = 0;
	mqd_t q = mq_open(longname, O_RDWR | O_CREAT, 0600, NULL);
	SHOW("open.name255", "%d", q >= 0);
	mq_close(q);
	RET("unlink.name255", mq_unlink(longname));
	RET("open.slash.inside", mq_open("/a/b", O_RDWR | O_CREAT, 0600, NULL));
	RET("open.slash.only", mq_open("/", O_RDWR | O_CREAT, 0600, NULL));
	RET("open.noslash", mq_open("abc", O_RDWR | O_CREAT, 0600, NULL));
	RET("unlink.noent", mq_unlink(qname));
	RET("open.dot", mq_open("/.", O_RDWR | O_CREAT, 0600, NULL));
	RET("open.dotdot", mq_open("/..", O_RDWR | O_CREAT, 0600, NULL));
	RET("unlink.slash.only", mq_unlink("/"));
	RET("unlink.slash.inside", mq_unlink("/a/b"));

	q = mq_open(qname, O_RDWR | O_CREAT | O_EXCL, 0666, NULL);
	SHOW("create", "%d", q >= 0);
	attr("create.attr", q);
	SHOW("create.cloexec", "%d", fcntl(q, F_GETFD) & FD_CLOEXEC);
	SHOW("create.getfl", "%#x", fcntl(q, F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	struct stat st;
	RET("fstat", fstat(q, &st));
	SHOW("fstat.mode", "%o size %ld", st.st_mode, (long)st.st_size);
	RET("open.excl", mq_open(qname, O_RDWR | O_CREAT | O_EXCL, 0600, NULL));
	mqd_t again = mq_open(qname, O_RDONLY | O_CREAT, 0600, &a); /* attr ignored: it exists */
	attr("open.existing.attr", again);
	mq_close(again);
	mq_close(q);

	struct mq_attr small = {0, 3, 16, 0, {0}};
	q = mq_open(other, O_RDWR | O_CREAT | O_EXCL, 0600, &small);
	attr("small.attr", q);
	mq_close(q);
	mq_unlink(other);
}

static void messages(void) {
	struct mq_attr small = {0, 4, 16, 0, {0}};
	mqd_t q = mq_open(other, O_RDWR | O_CREAT | O_EXCL, 0600, &small);
	static const struct {
		const char *text;
		unsigned prio;
	} sends[] = {{"a", 1}, {"bb", 5}, {"ccc", 1}, {"dddd", 5}};
	for (int i = 0; i < 4; i++)
		RET("send", mq_send(q, sends[i].text, strlen(sends[i].text), sends[i].prio));
	attr("full.attr", q);
	char buf[64] = "";
	ssize_t n = read(q, buf, sizeof buf - 1);
	buf[n > 0 ? n - 1 : 0] = 0; /* without its newline */
	SHOW("read.status", "%s", buf);
	RET("read.again", read(q, buf, sizeof buf));
	RET("write", write(q, "x", 1));
	struct pollfd p = {q, POLLIN | POLLOUT, 0};
	RET("poll.full", poll(&p, 1, 0));
	SHOW("poll.full.revents", "%#x", p.revents);
	struct mq_attr nb = {O_NONBLOCK, 0, 0, 0, {0}}, old;
	RET("setattr.nonblock", mq_setattr(q, &nb, &old));
	SHOW("setattr.old.flags", "%#lx", old.mq_flags);
	attr("nonblock.attr", q);
	SHOW("nonblock.getfl", "%#x", fcntl(q, F_GETFL) & O_NONBLOCK);
	RET("send.full.nonblock", mq_send(q, "e", 1, 0));
	nb.mq_flags = 0;
	mq_setattr(q, &nb, NULL);
	nb.mq_flags = O_NONBLOCK | O_APPEND;
	RET("setattr.badflags", mq_setattr(q, &nb, NULL));
	struct timespec past = {1, 0};
	RET("timedsend.full.past", mq_timedsend(q, "e", 1, 0, &past));
	struct timespec later = deadline_ms(CLOCK_REALTIME, 50), start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	RET("timedsend.full.timeout", mq_timedsend(q, "e", 1, 0, &later));
	clock_gettime(CLOCK_MONOTONIC, &end);
	SHOW("timedsend.waited", "%d", (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000 >= 45);
	struct timespec badts = {0, 1000000000};
	RET("timedsend.badtimeout", mq_timedsend(q, "e", 1, 0, &badts));
	RET("receive.small", mq_receive(q, buf, 15, NULL));
	for (int i = 0; i < 4; i++) {
		unsigned prio = 99;
		memset(buf, 0, sizeof buf);
		n = mq_receive(q, buf, sizeof buf, &prio);
		SHOW("receive", "%zd %s prio %u", n, buf, prio);
	}
	RET("send.badprio", mq_send(q, "x", 1, 32768));
	RET("send.maxprio", mq_send(q, "x", 1, 32767));
	mq_receive(q, buf, sizeof buf, NULL);
	RET("send.toolong", mq_send(q, buf, 17, 0));
	RET("send.msgsize", mq_send(q, buf, 16, 0));
	RET("send.bad", mq_send(q, BAD, 4, 0));
	RET("receive.msgsize", mq_receive(q, buf, sizeof buf, NULL));
	RET("receive.bad", mq_send(q, "zz", 2, 0) == 0 ? mq_receive(q, BAD, 16, NULL) : -2);
	attr("after.bad", q);
	p.revents = 0;
	RET("poll.empty", poll(&p, 1, 0));
	SHOW("poll.empty.revents", "%#x", p.revents);
	int ep = epoll_create1(0);
	struct epoll_event ev = {EPOLLIN, {.u32 = 7}};
	RET("epoll.add", epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev));
	RET("epoll.empty", epoll_wait(ep, &ev, 1, 0));
	mq_send(q, "y", 1, 0);
	RET("epoll.message", epoll_wait(ep, &ev, 1, 1000));
	SHOW("epoll.data", "%u %#x", ev.data.u32, ev.events);
	mq_receive(q, buf, sizeof buf, NULL);
	close(ep);
	later = deadline_ms(CLOCK_REALTIME, 50);
	RET("timedreceive.timeout", mq_timedreceive(q, buf, sizeof buf, NULL, &later));
	RET("timedreceive.badtimeout", mq_timedreceive(q, buf, sizeof buf, NULL, &badts));
	nb.mq_flags = O_NONBLOCK;
	mq_setattr(q, &nb, NULL);
	RET("receive.empty.nonblock", mq_receive(q, buf, sizeof buf, NULL));

	mqd_t ro = mq_open(other, O_RDONLY), wo = mq_open(other, O_WRONLY);
	RET("send.rdonly", mq_send(ro, "x", 1, 0));
	RET("receive.wronly", mq_receive(wo, buf, sizeof buf, NULL));
	RET("read.wronly", read(wo, buf, sizeof buf));
	int pfd[2];
	pipe(pfd);
	RET("send.pipe", mq_send(pfd[1], "x", 1, 0));
	RET("getattr.pipe", mq_getattr(pfd[0], &old));
	RET("send.badfd", mq_send(-1, "x", 1, 0));
	close(pfd[0]);
	close(pfd[1]);

	/* Unlinked, the queue lives while open. */
	RET("unlink", mq_unlink(other));
	RET("unlink.again", mq_unlink(other));
	RET("open.unlinked", mq_open(other, O_RDWR));
	RET("send.unlinked", mq_send(wo, "zz", 2, 3));
	RET("receive.unlinked", mq_receive(ro, buf, sizeof buf, NULL));
	mq_close(ro);
	mq_close(wo);
	mq_close(q);
}

/* An unprivileged user: the settings bound the attributes, the mode
 * guards opens, the sticky directory guards unlinks, RLIMIT_MSGQUEUE
 * bounds what a user's queues may hold. */
static void unprivileged(void) {
	mqd_t q = mq_open(other, O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
	mq_close(q);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = {100000, 100000};
		setrlimit(RLIMIT_MSGQUEUE, &rl);
		if (setgid(54321) || setuid(54321))
			_exit(99);
		RET("user.open.mode", mq_open(other, O_RDONLY));
		RET("user.unlink.sticky", mq_unlink(other));
		RET("user.open.qname", mq_open(qname, O_RDONLY) >= 0);
		char mine[80];
		snprintf(mine, sizeof mine, "%s-user", other);
		struct mq_attr a = {0, 11, 100, 0, {0}};
		RET("user.maxmsg.over", mq_open(mine, O_RDWR | O_CREAT, 0600, &a));
		a.mq_maxmsg = 10, a.mq_msgsize = 8193;
		RET("user.msgsize.over", mq_open(mine, O_RDWR | O_CREAT, 0600, &a));
		a.mq_msgsize = 8192;
		mqd_t m = mq_open(mine, O_RDWR | O_CREAT, 0600, &a);
		SHOW("user.default.size", "%d", m >= 0);
		char second[96];
		snprintf(second, sizeof second, "%s2", mine);
		RET("user.rlimit", mq_open(second, O_RDWR | O_CREAT, 0600, &a));
		a.mq_maxmsg = 1, a.mq_msgsize = 1000;
		mqd_t s = mq_open(second, O_RDWR | O_CREAT, 0600, &a);
		SHOW("user.small.fits", "%d", s >= 0);
		mq_close(s);
		mq_unlink(second);
		mq_close(m);
		RET("user.unlink.own", mq_unlink(mine));
		_exit(0);
	}
	SHOW("user.status", "%d", wait_status(pid));
	mq_unlink(other);
}

int main(void) {
	snprintf(qname, sizeof qname, "/conform-mq-%d", getpid());
	snprintf(other, sizeof other, "/conform-mq-other-%d", getpid());
	static const char *files[] = {"queues_max", "msg_max", "msgsize_max", "msg_default", "msgsize_default"};
	for (int i = 0; i < 5; i++) {
		char path[128];
		snprintf(path, sizeof path, "/proc/sys/fs/mqueue/%s", files[i]);
		show_file(path, path);
	}
	opens();
	messages();
	unprivileged();
	RET("unlink.end", mq_unlink(qname));
	return 0;
}
