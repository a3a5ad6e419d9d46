/* pipe-user-pages-soft: once an unprivileged user's pipes have 16384
 * pages of capacity, its new pipes get two pages and F_SETPIPE_SZ may not
 * grow one (EPERM); closing pipes gives the pages back. Root is not
 * limited. As LTP's pipe15. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int fds[2100][2];

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("soft", "/proc/sys/fs/pipe-user-pages-soft");
	show_file("hard", "/proc/sys/fs/pipe-user-pages-hard");
	struct rlimit rl = {4000, 4000};
	setrlimit(RLIMIT_NOFILE, &rl);
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		int n = 0;
		for (; n < 1024; n++)
			if (pipe(fds[n]) != 0)
				break;
		SHOW("made", "%d", n);
		SHOW("last-full", "%d", fcntl(fds[1023][1], F_GETPIPE_SZ));
		pipe(fds[1024]);
		SHOW("past-soft", "%d", fcntl(fds[1024][1], F_GETPIPE_SZ));
		RET("grow-past-soft", fcntl(fds[1024][1], F_SETPIPE_SZ, 65536));
		RET("shrink", fcntl(fds[0][1], F_SETPIPE_SZ, 4096));
		pipe(fds[1025]);
		SHOW("after-shrink", "%d", fcntl(fds[1025][1], F_GETPIPE_SZ));
		for (int i = 0; i < 10; i++)
			close(fds[i][0]), close(fds[i][1]);
		pipe(fds[1026]);
		SHOW("after-close", "%d", fcntl(fds[1026][1], F_GETPIPE_SZ));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	int n = 0;
	for (; n < 1100; n++)
		if (pipe(fds[n]) != 0)
			break;
	SHOW("root.made", "%d", n);
	SHOW("root.last", "%d", fcntl(fds[n - 1][1], F_GETPIPE_SZ));
	return 0;
}
