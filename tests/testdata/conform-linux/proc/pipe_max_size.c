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

static void put(const char *name, const char *text) {
	int fd = open("/proc/sys/fs/pipe-max-size", O_WRONLY);
	RET(name, write(fd, text, strlen(text)));
	close(fd);
}

static void show(const char *name) {
	char buf[64] = {0};
	int fd = open("/proc/sys/fs/pipe-max-size", O_RDONLY);
	read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[strcspn(buf, "\n")] = 0;
	SHOW(name, "%s", buf);
}

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
	show("default");
	put("set.5000", "5000");
	show("after.5000");
	pipe_as("root", 0);
	pipe_as("nobody", 1);
	put("set.0", "0");
	show("after.0");
	put("set.garbage", "abc");
	put("set.4096", "4096\n");
	show("after.4096");
	pipe_as("nobody.4096", 1);
	put("set.back", "1048576");
	show("back");
	pipe_as("nobody.default", 1);
	int fd = open("/proc/self/stat", O_WRONLY);
	RET("stat.write", write(fd, "x", 1));
	close(fd);
	return 0;
}
