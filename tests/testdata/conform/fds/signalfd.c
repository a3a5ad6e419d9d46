/* signalfd4: pending signals of the mask read as signalfd_siginfo records
 * (kill, tgkill, sigqueue and real-time signals, several in one read),
 * poll and epoll readiness, a new mask on an existing signalfd, a
 * blocking read woken by another process, and the errors. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static struct signalfd_siginfo rec[4];

static void show_record(const char *name, const struct signalfd_siginfo *s) {
	printf("%s: signo %u code %d own-pid %d uid %u int %d\n", name, s->ssi_signo, s->ssi_code,
	       s->ssi_pid == (uint32_t)getpid(), s->ssi_uid, s->ssi_int);
	fflush(stdout);
}

static int readable(int fd) {
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

int main(void) {
	sigset_t blocked, usr1;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigaddset(&blocked, SIGUSR2);
	sigaddset(&blocked, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);

	int sfd = signalfd(-1, &usr1, SFD_NONBLOCK | SFD_CLOEXEC);
	SHOW("made", "%d", sfd >= 0);
	SHOW("cloexec", "%d", (fcntl(sfd, F_GETFD) & FD_CLOEXEC) != 0);
	RET("read.empty", read(sfd, rec, sizeof rec[0]));
	SHOW("poll.empty", "%#x", readable(sfd));

	kill(getpid(), SIGUSR1);
	SHOW("poll.kill", "%#x", readable(sfd));
	RET("read.short", read(sfd, rec, sizeof rec[0] - 1));
	RET("read.kill", read(sfd, rec, sizeof rec));
	show_record("kill", &rec[0]);
	sigset_t pending;
	sigpending(&pending);
	SHOW("pending.after", "%d", sigismember(&pending, SIGUSR1));

	raise(SIGUSR1);
	RET("read.tgkill", read(sfd, rec, sizeof rec));
	show_record("tgkill", &rec[0]);

	sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 42});
	RET("read.sigqueue", read(sfd, rec, sizeof rec));
	show_record("sigqueue", &rec[0]);

	/* A new mask: USR1 stays pending, USR2 and two real-time signals
	 * are read in one call, lowest number first. */
	sigset_t more;
	sigemptyset(&more);
	sigaddset(&more, SIGUSR2);
	sigaddset(&more, SIGRTMIN);
	RET("remask.same-fd", signalfd(sfd, &more, 0) == sfd);
	kill(getpid(), SIGUSR1);
	sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 1});
	sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 2});
	kill(getpid(), SIGUSR2);
	RET("read.several", read(sfd, rec, sizeof rec));
	show_record("several.0", &rec[0]);
	SHOW("several.1", "%d %d", rec[1].ssi_signo == (uint32_t)SIGRTMIN, rec[1].ssi_int);
	SHOW("several.2", "%d %d", rec[2].ssi_signo == (uint32_t)SIGRTMIN, rec[2].ssi_int);
	sigpending(&pending);
	SHOW("usr1.still", "%d", sigismember(&pending, SIGUSR1));
	sigset_t none;
	sigemptyset(&none);
	signalfd(sfd, &usr1, 0);
	RET("read.usr1", read(sfd, rec, sizeof rec));

	/* epoll sees a signal queued after the watch. */
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7}, out;
	RET("epoll.add", epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev));
	RET("epoll.empty", epoll_wait(ep, &out, 1, 0));
	kill(getpid(), SIGUSR1);
	RET("epoll.ready", epoll_wait(ep, &out, 1, 1000));
	SHOW("epoll.event", "%#x %u", out.events, out.data.u32);
	RET("read.epoll", read(sfd, rec, sizeof rec));

	/* A blocking read waits for another process's signal. */
	int bfd = signalfd(-1, &usr1, 0);
	pid_t child = fork();
	if (child == 0) {
		usleep(100000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	RET("read.blocking", read(bfd, rec, sizeof rec));
	SHOW("blocking.signo", "%u", rec[0].ssi_signo);
	waitpid(child, NULL, 0);

	/* Errors. */
	RET("bad-fd", signalfd(-2, &usr1, 0));
	RET("not-signalfd", signalfd(0, &usr1, 0));
	RET("bad-flags", signalfd(-1, &usr1, O_RDWR));
	RET("bad-mask", syscall(SYS_signalfd4, -1, BAD, 8, 0));
	RET("write", write(sfd, rec, sizeof rec[0]));
	RET("lseek", lseek(sfd, 0, SEEK_SET));
	return 0;
}
