/* pidfds: pidfd_open's checks, polling for the exit, waitid(P_PIDFD) with
 * and without PIDFD_NONBLOCK, pidfd_send_signal's checks and siginfo, and
 * pidfd_getfd. Only results and errnos are printed, never pids or fds. */
#include "../conform.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open(pid_t pid, unsigned flags) { return syscall(SYS_pidfd_open, pid, flags); }
static int pidfd_send_signal(int fd, int sig, siginfo_t *info, unsigned flags) {
	return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}
static int pidfd_getfd(int fd, int target, unsigned flags) { return syscall(SYS_pidfd_getfd, fd, target, flags); }

static volatile int got_sig, got_value, got_code;
static void on_usr1(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	got_sig = sig;
	got_value = si->si_value.sival_int;
	got_code = si->si_code;
}

static int readable(int fd, int ms) {
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, ms);
	return n == 1 ? p.revents : n;
}

int main(void) {
	RET("open flags", pidfd_open(getpid(), 1));
	RET("open pid 0", pidfd_open(0, 0));
	RET("open pid -1", pidfd_open(-1, 0));
	RET("open no such pid", pidfd_open(4000000, 0));

	int self = pidfd_open(getpid(), 0);
	SHOW("open self ok", "%d", self >= 0);
	SHOW("cloexec", "%d", fcntl(self, F_GETFD) & FD_CLOEXEC);
	char b[8];
	RET("read", read(self, b, sizeof b));
	RET("write", write(self, b, sizeof b));
	SHOW("poll self", "%d", readable(self, 0));

	/* A child that waits for its pipe to close, then exits 7. */
	int p[2];
	pipe(p);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		read(p[0], b, 1);
		_exit(7);
	}
	close(p[0]);
	int fd = pidfd_open(pid, 0), nfd = pidfd_open(pid, PIDFD_NONBLOCK);
	SHOW("nonblock flag", "%d", (fcntl(nfd, F_GETFL) & O_NONBLOCK) != 0);
	siginfo_t si = {0};
	RET("waitid nonblock running", waitid(P_PIDFD, nfd, &si, WEXITED));
	RET("waitid nonblock WNOHANG", waitid(P_PIDFD, nfd, &si, WEXITED | WNOHANG));
	SHOW("poll running", "%d", readable(fd, 50));
	RET("send sig 0", pidfd_send_signal(fd, 0, NULL, 0));
	RET("send flags", pidfd_send_signal(fd, 0, NULL, 8));
	RET("send two flags", pidfd_send_signal(fd, 0, NULL, 3));
	RET("send thread flag", pidfd_send_signal(fd, 0, NULL, 1));
	RET("send not a pidfd", pidfd_send_signal(p[1], 0, NULL, 0));
	siginfo_t user = {.si_signo = SIGUSR1, .si_code = SI_USER};
	RET("send si_code SI_USER to other", pidfd_send_signal(fd, SIGUSR1, &user, 0));
	int gfd = pidfd_getfd(fd, 1, 0);
	SHOW("getfd ok", "%d", gfd >= 0);
	SHOW("getfd cloexec", "%d", fcntl(gfd, F_GETFD) & FD_CLOEXEC);
	RET("getfd flags", pidfd_getfd(fd, 1, 1));
	RET("getfd bad target", pidfd_getfd(fd, 999, 0));
	RET("getfd not a pidfd", pidfd_getfd(p[1], 1, 0));
	close(p[1]); /* the child exits */
	SHOW("poll exited", "%d", readable(fd, 5000));
	RET("getfd exited", pidfd_getfd(fd, 1, 0));
	RET("waitid", waitid(P_PIDFD, fd, &si, WEXITED | WNOWAIT));
	SHOW("waitid status", "%d %d", si.si_code, si.si_status);
	RET("send zombie", pidfd_send_signal(fd, 0, NULL, 0));
	RET("waitid nonblock exited", waitid(P_PIDFD, nfd, &si, WEXITED));
	SHOW("poll reaped", "%d", readable(fd, 0));
	RET("send reaped", pidfd_send_signal(fd, SIGUSR1, NULL, 0));
	RET("waitid reaped", waitid(P_PIDFD, fd, &si, WEXITED));
	RET("waitid not a pidfd", waitid(P_PIDFD, p[0] + 100, &si, WEXITED));
	RET("waitid pidfd -1", waitid(P_PIDFD, -1, &si, WEXITED));
	RET("waitid pidfd is stdout", waitid(P_PIDFD, 1, &si, WEXITED));

	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
	sigaction(SIGUSR1, &sa, NULL);
	siginfo_t q = {.si_signo = SIGUSR1, .si_code = SI_QUEUE};
	q.si_value.sival_int = 42;
	RET("send queue self", pidfd_send_signal(self, SIGUSR1, &q, 0));
	SHOW("handler", "%d %d %d", got_sig, got_value, got_code);
	q.si_signo = SIGUSR2;
	RET("send signo mismatch", pidfd_send_signal(self, SIGUSR1, &q, 0));
	int dir = open("/proc/self", O_DIRECTORY | O_CLOEXEC);
	got_sig = 0;
	RET("send /proc/self", pidfd_send_signal(dir, SIGUSR1, NULL, 0));
	SHOW("handler /proc", "%d %d", got_sig, got_code);
	RET("getfd /proc/self", pidfd_getfd(dir, 1, 0));
	return 0;
}
