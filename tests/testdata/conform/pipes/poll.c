/* poll, ppoll and select on pipes and files: readiness, POLLHUP, POLLNVAL,
 * timeouts, and a wake-up by another process. */
#include "../conform.h"
#include <fcntl.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>

static void show_poll(const char *name, struct pollfd *p, int n) {
	for (int i = 0; i < n; i++)
		printf("%s[%d]: revents %#x\n", name, i, p[i].revents);
	fflush(stdout);
}

int main(void) {
	int p[2];
	pipe(p);
	int f = open("pf", O_CREAT | O_RDWR | O_TRUNC, 0644);
	struct pollfd fds[4] = {
		{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}, {f, POLLIN | POLLOUT, 0}, {99, POLLIN, 0}};
	RET("poll.initial", poll(fds, 4, 0));
	show_poll("initial", fds, 4);
	write(p[1], "x", 1);
	RET("poll.readable", poll(fds, 1, 0));
	show_poll("readable", fds, 1);
	struct pollfd neg = {-1, POLLIN, 7};
	RET("poll.negative.fd", poll(&neg, 1, 0));
	SHOW("negative.revents", "%d", neg.revents);
	char c;
	read(p[0], &c, 1);
	RET("poll.timeout", poll(fds, 1, 30));
	struct timespec ts = {0, 20000000};
	RET("ppoll.timeout", ppoll(fds, 1, &ts, NULL));
	SHOW("ppoll.remaining", "%ld %ld", (long)ts.tv_sec, ts.tv_nsec);
	RET("poll.badptr", poll((struct pollfd *)BAD, 1, 0));
	volatile nfds_t too_many = 1u << 30;
	RET("poll.too.many", poll(fds, too_many, 0));
	close(p[1]);
	RET("poll.hup", poll(fds, 1, 0));
	show_poll("hup", fds, 1);
	close(p[0]);

	/* select */
	pipe(p);
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &w);
	struct timeval tv = {0, 0};
	RET("select.write.only", select(p[1] + 1, &r, &w, NULL, &tv));
	SHOW("select.isset", "%d %d", FD_ISSET(p[0], &r), FD_ISSET(p[1], &w));
	write(p[1], "y", 1);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	FD_SET(f, &r);
	tv.tv_usec = 0;
	RET("select.both", select(f + 1, &r, NULL, NULL, &tv));
	SHOW("select.isset2", "%d %d", FD_ISSET(p[0], &r), FD_ISSET(f, &r));
	FD_ZERO(&r);
	FD_SET(50, &r);
	RET("select.badfd", select(51, &r, NULL, NULL, &tv));
	RET("select.negative", select(-1, NULL, NULL, NULL, &tv));
	tv.tv_usec = 20000;
	RET("select.timeout", select(0, NULL, NULL, NULL, &tv));
	SHOW("select.remaining", "%ld %ld", (long)tv.tv_sec, (long)tv.tv_usec);
	read(p[0], &c, 1);

	/* A child writes after a delay; the parent's poll wakes up. */
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 50000000};
		nanosleep(&d, NULL);
		write(p[1], "z", 1);
		_exit(0);
	}
	struct pollfd one = {p[0], POLLIN, 0};
	RET("poll.woken", poll(&one, 1, 10000));
	SHOW("woken.revents", "%#x", one.revents);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	RET("select.ready.now", select(p[0] + 1, &r, NULL, NULL, NULL));
	waitpid(pid, NULL, 0);
	return 0;
}
