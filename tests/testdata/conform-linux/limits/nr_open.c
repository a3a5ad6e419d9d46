/* /proc/sys/fs/nr_open: root lowers it (64 at least), RLIMIT_NOFILE's hard
 * limit cannot pass it, and a descriptor table shared by CLONE_FILES
 * whose descriptors go past it cannot be copied (unshare, close_range's
 * CLOSE_RANGE_UNSHARE, fork: EMFILE), as LTP's unshare03 checks. A table
 * is not kept from growing past it here (Linux's expand_files). */
#include "../../conform/conform.h"
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void put(const char *name, const char *value) {
	int fd = open("/proc/sys/fs/nr_open", O_WRONLY);
	RET(name, write(fd, value, strlen(value)));
	close(fd);
}

static char stack[64 * 1024] __attribute__((aligned(16)));

static int shared_child(void *arg) {
	(void)arg;
	RET("shared.unshare", unshare(CLONE_FILES));
	RET("shared.close_range", syscall(SYS_close_range, 3, 3, CLOSE_RANGE_UNSHARE));
	return 0;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	char old[32] = "";
	int fd = open("/proc/sys/fs/nr_open", O_RDONLY);
	SHOW("read", "%d", read(fd, old, sizeof old - 1) > 1 && atoi(old) >= 4096);
	close(fd);
	put("set.63", "63");
	put("set.garbage", "many");
	put("set.64", "64");
	show_file("after", "/proc/sys/fs/nr_open");
	struct rlimit rl = {64, 100};
	RET("rlimit.past", setrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_max = 64;
	RET("rlimit.at", setrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = rl.rlim_max = 1024;
	put("set.2048", "2048");
	RET("rlimit.back", setrlimit(RLIMIT_NOFILE, &rl));
	RET("dup2.65", dup2(2, 65));
	put("set.64.again", "64");
	pid_t pid = clone(shared_child, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
	waitpid(pid, NULL, 0);
	pid = fork();
	if (pid == 0)
		_exit(0);
	SHOW("fork.past", "%d", pid > 0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(65);
	pid = clone(shared_child, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
	waitpid(pid, NULL, 0);

	fd = open("/proc/sys/fs/nr_open", O_WRONLY);
	write(fd, old, strlen(old));
	return 0;
}
