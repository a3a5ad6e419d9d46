/* The /proc/sys files LTP reads in its set-up, with Linux's values:
 * kernel/pid_max (and pids stay below it), kernel/tainted,
 * kernel/core_pattern, fs/pipe-max-size (which F_SETPIPE_SZ takes at most
 * without privilege), kernel/hostname and domainname (uname's names).
 * (qemu-riscv64 would show the host's, so Linux is the oracle.) */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>

/* value reads a one-line file without its newline. */
static const char *value(const char *path) {
	static char buf[256];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return strerrorname_np(errno);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	SHOW(path, "one line: %d", n > 0 && buf[n - 1] == '\n' && strchr(buf, '\n') == buf + n - 1);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	const char *shown[] = {"/proc/sys/kernel/pid_max", "/proc/sys/kernel/tainted", "/proc/sys/kernel/core_pattern",
	                       "/proc/sys/fs/pipe-max-size"};
	for (unsigned i = 0; i < sizeof shown / sizeof *shown; i++)
		SHOW(shown[i], "%s", value(shown[i]));
	long pid_max = atol(value("/proc/sys/kernel/pid_max"));
	SHOW("own pid below pid_max", "%d", getpid() < pid_max);

	struct utsname u;
	uname(&u);
	SHOW("hostname is uname's nodename", "%d", strcmp(value("/proc/sys/kernel/hostname"), u.nodename) == 0);
	SHOW("domainname is uname's", "%d", strcmp(value("/proc/sys/kernel/domainname"), u.domainname) == 0);

	int p[2];
	pipe(p);
	long max = atol(value("/proc/sys/fs/pipe-max-size"));
	RET("F_SETPIPE_SZ pipe-max-size", fcntl(p[1], F_SETPIPE_SZ, max));
	return 0;
}
