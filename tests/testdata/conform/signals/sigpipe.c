/* SIGPIPE: a write to a socket whose peer is closed raises SIGPIPE on the
 * writer and fails with EPIPE; send with MSG_NOSIGNAL only fails; with
 * SIGPIPE ignored the write fails quietly; by default it kills. */
#include "../conform.h"
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

static volatile int pipes, code;
static void on_pipe(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	pipes++;
	code = si->si_code;
}

/* broken returns a socket whose peer is closed. */
static int broken(void) {
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	close(sv[1]);
	return sv[0];
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_pipe;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGPIPE, &sa, NULL);
	int fd = broken();
	RET("write.broken", write(fd, "x", 1));
	SHOW("write.sigpipe", "n=%d code=%d", pipes, code);
	RET("send.broken", send(fd, "x", 1, 0));
	SHOW("send.sigpipe", "n=%d", pipes);
	RET("send.nosignal", send(fd, "x", 1, MSG_NOSIGNAL));
	SHOW("send.nosignal.sigpipe", "n=%d", pipes);
	RET("sendto.nosignal", sendto(fd, "x", 1, MSG_NOSIGNAL, NULL, 0));
	SHOW("sendto.nosignal.sigpipe", "n=%d", pipes);
	signal(SIGPIPE, SIG_IGN);
	RET("write.ignored", write(fd, "x", 1));
	SHOW("write.ignored.sigpipe", "n=%d", pipes);

	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		write(fd, "x", 1);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("write.default", "signaled=%d sig=%d", WIFSIGNALED(status), WTERMSIG(status));
	return 0;
}
