/* A blocking write to a TCP connection whose peer has shut down its side
 * and reads nothing: the writer fills the buffers and sleeps, using no
 * CPU, and SIGKILL ends it, as on Linux. Ours took the EPOLLRDHUP that
 * netstack reports for the peer's shutdown for room to write, tried
 * again and again, and no signal ended it (make fuzz at -smp 4, seed 12,
 * program 34442). */
#include "../../conform/conform.h"
#include "../loopback.h"
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static char buf[8 << 20];

/* cpu_ticks returns the user and system time pid has used, in clock ticks. */
static long cpu_ticks(pid_t pid) {
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = 0;
	char *p = strrchr(line, ')');
	long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2)
		return -1;
	return utime + stime;
}

int main(void) {
	loopback_up();
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	int sv[2];
	tcp_pair(sv);
	int conn = sv[0], peer = sv[1];
	RET("peer.shutdown", shutdown(peer, SHUT_WR));
	/* poll reports what it was asked for, and POLLERR and POLLHUP: the
	 * peer's shutdown is POLLRDHUP only to those who ask */
	struct pollfd p = {conn, POLLIN, 0};
	RET("poll.in", poll(&p, 1, 1000));
	SHOW("poll.in.revents", "%#x", p.revents);
	pid_t writer = fork();
	if (writer == 0) {
		write(conn, buf, sizeof buf);
		_exit(0);
	}
	struct timespec second = {1, 0};
	nanosleep(&second, NULL);
	long before = cpu_ticks(writer);
	nanosleep(&second, NULL);
	long used = cpu_ticks(writer) - before;
	/* a tenth of the second, for a busy host */
	SHOW("writer.blocked.idle", "%d", before >= 0 && used < 10);
	kill(writer, SIGKILL);
	int status = 0;
	pid_t r = 0;
	for (int i = 0; i < 50 && (r = waitpid(writer, &status, WNOHANG)) == 0; i++)
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	SHOW("writer.killed", "%d", r == writer && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	return 0;
}
