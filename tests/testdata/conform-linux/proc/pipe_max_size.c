/* /proc/sys/fs/pipe-max-size: root sets it (rounded up to a power of two
 * pages, 0 to one; garbage is EINVAL), a pipe made without
 * CAP_SYS_RESOURCE is no larger, and F_SETPIPE_SZ past it is EPERM for
 * such a process; a /proc file with no write method refuses writes
 * (EINVAL), as LTP's fcntl35. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void pipe_as(const char *name, int drop) {
	pid_t pid = fork();
	if (pid == 0) {
		if (drop)
			setuid(65534);
		int p[2];
		pipe(p);
		printf("%s: capacity %d set-64k %d", name, fcntl(p[1], F_GETPIPE_SZ), fcntl(p[1], F_SETPIPE_SZ, 65536));
		printf(" errno %s\n", strerrorname_np(errno));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("default", "/proc/sys/fs/pipe-max-size");
	put_file("set.5000", "/proc/sys/fs/pipe-max-size", "5000");
	show_file("after.5000", "/proc/sys/fs/pipe-max-size");
	pipe_as("root", 0);
	pipe_as("nobody", 1);
	put_file("set.0", "/proc/sys/fs/pipe-max-size", "0");
	show_file("after.0", "/proc/sys/fs/pipe-max-size");
	put_file("set.garbage", "/proc/sys/fs/pipe-max-size", "abc");
	put_file("set.4096", "/proc/sys/fs/pipe-max-size", "4096\n");
	show_file("after.4096", "/proc/sys/fs/pipe-max-size");
	pipe_as("nobody.4096", 1);
	put_file("set.back", "/proc/sys/fs/pipe-max-size", "1048576");
	show_file("back", "/proc/sys/fs/pipe-max-size");
	pipe_as("nobody.default", 1);
	int fd = open("/proc/self/stat", O_WRONLY);
	RET("stat.write", write(fd, "x", 1));
	close(fd);
	return 0;
}
