/* Resource limits: getrlimit/setrlimit/prlimit64 rules, RLIMIT_NOFILE on
 * descriptors, RLIMIT_NPROC at fork for a user that is not root, limits
 * inherited by a child, prlimit on another process and its permission
 * rule. (RLIMIT_STACK is set but not read back: qemu-user leaves the
 * stack, data and address-space limits to the host.) */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void show_limit(const char *name, int resource) {
	struct rlimit l;
	if (getrlimit(resource, &l) < 0) {
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
	} else {
		printf("%s: %lld %lld\n", name, (long long)l.rlim_cur, (long long)l.rlim_max);
	}
	fflush(stdout);
}

static int set(int resource, rlim_t cur, rlim_t max) {
	struct rlimit l = {cur, max};
	return setrlimit(resource, &l);
}

static int wait_status(pid_t pid) {
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void) {
	char c;

	/* Setting and reading back. */
	RET("set.nofile", set(RLIMIT_NOFILE, 64, 128));
	show_limit("nofile", RLIMIT_NOFILE);
	RET("set.soft.above.hard", set(RLIMIT_NOFILE, 256, 128));
	RET("set.hard.past.nr_open", set(RLIMIT_NOFILE, 64, 1 << 30));
	RET("set.bad.resource", set(99, 1, 1));
	RET("get.bad.resource", getrlimit(99, &(struct rlimit){0}));
	RET("set.core", set(RLIMIT_CORE, 0, 4096));
	show_limit("core", RLIMIT_CORE);
	RET("set.stack", set(RLIMIT_STACK, 4 << 20, RLIM_INFINITY));
	struct rlimit old, new = {32, 64};
	RET("prlimit.self", prlimit(0, RLIMIT_NOFILE, &new, &old));
	SHOW("prlimit.old", "%lld %lld", (long long)old.rlim_cur, (long long)old.rlim_max);
	show_limit("prlimit.new", RLIMIT_NOFILE);
	RET("prlimit.nopid", prlimit(0x3fffffff, RLIMIT_NOFILE, NULL, &old));
	RET("prlimit.nopid.bad.resource", prlimit(0x3fffffff, 99, NULL, &old));
	RET("prlimit.bad.new", prlimit(0, RLIMIT_NOFILE, BAD, NULL));
	RET("prlimit.bad.old", prlimit(0, RLIMIT_NOFILE, NULL, BAD));

	/* RLIMIT_NOFILE bounds descriptor numbers. */
	RET("dup2.below", dup2(1, 31));
	RET("dup2.at", dup2(1, 32));
	RET("fcntl.dupfd.at", fcntl(1, F_DUPFD, 32));
	RET("fcntl.dupfd.below", fcntl(1, F_DUPFD, 30));
	RET("lower.keeps.open", set(RLIMIT_NOFILE, 16, 64));
	RET("write.above.limit", write(31, "", 0));
	int opened[64], n = 0, fd;
	while (n < 64 && (fd = open(".", O_RDONLY)) >= 0)
		opened[n++] = fd;
	SHOW("open.until", "%s", strerrorname_np(errno));
	SHOW("open.below.limit", "%d", n > 0 && opened[n - 1] < 16);
	RET("dup.full", dup(1));
	RET("pipe.full", pipe((int[2]){0}));
	close(opened[n - 1]);
	RET("close.frees", open(".", O_RDONLY) == opened[n - 1]);
	for (int i = 0; i < n; i++)
		close(opened[i]);
	close(30);
	close(31);

	/* A child inherits the limits. */
	pid_t pid = fork();
	if (pid == 0) {
		show_limit("child.nofile", RLIMIT_NOFILE);
		show_limit("child.core", RLIMIT_CORE);
		exit(0);
	}
	SHOW("child.status", "%d", wait_status(pid));

	/* Unprivileged: no raising the hard limit, lowering is fine. */
	pid = fork();
	if (pid == 0) {
		RET("user.setuid", setuid(54321));
		RET("user.raise.hard", set(RLIMIT_NOFILE, 16, 128));
		RET("user.raise.soft.past.hard", set(RLIMIT_NOFILE, 128, 64));
		RET("user.lower.hard", set(RLIMIT_NOFILE, 16, 48));
		RET("user.raise.back", set(RLIMIT_NOFILE, 16, 64));
		RET("user.raise.soft", set(RLIMIT_NOFILE, 48, 48));
		show_limit("user.nofile", RLIMIT_NOFILE);
		exit(0);
	}
	SHOW("user.status", "%d", wait_status(pid));

	/* RLIMIT_NPROC: a user at the limit cannot fork; root can. */
	pid = fork();
	if (pid == 0) {
		RET("nproc.zero", set(RLIMIT_NPROC, 0, 0));
		pid_t root_child = fork();
		if (root_child == 0)
			exit(7);
		SHOW("nproc.root.fork", "%d", wait_status(root_child));
		RET("nproc.setuid", setuid(54321));
		RET("nproc.user.fork", fork());
		RET("nproc.user.raise", set(RLIMIT_NPROC, 1, 1));
		exit(0);
	}
	SHOW("nproc.status", "%d", wait_status(pid));
	pid = fork();
	if (pid == 0) {
		RET("nproc.some", set(RLIMIT_NPROC, 100, 100));
		RET("nproc.setuid2", setuid(54321));
		pid_t c = fork();
		if (c == 0)
			exit(3);
		SHOW("nproc.under.limit.fork", "%d", wait_status(c));
		exit(0);
	}
	SHOW("nproc.status2", "%d", wait_status(pid));

	/* Becoming a user who already runs more than RLIMIT_NPROC tasks
	 * succeeds, but execve then fails with EAGAIN (before it looks at the
	 * file) while the user still does; becoming one who does not leaves
	 * execve alone. */
	pid = fork();
	if (pid == 0) {
		RET("nproc.exec.zero", set(RLIMIT_NPROC, 0, 0));
		RET("nproc.exec.setuid.alone", setuid(54321));
		RET("nproc.exec.alone", execl("/no-such-program", "x", (char *)NULL));
		exit(0);
	}
	SHOW("nproc.exec.status", "%d", wait_status(pid));
	int up[2];
	pipe(up);
	pid_t other = fork();
	if (other == 0) {
		setuid(54321);
		write(up[1], "u", 1);
		pause();
		exit(0);
	}
	read(up[0], &c, 1);
	pid = fork();
	if (pid == 0) {
		RET("nproc.exec.zero2", set(RLIMIT_NPROC, 0, 0));
		RET("nproc.exec.setuid.crowded", setuid(54321));
		RET("nproc.exec.crowded", execl("/no-such-program", "x", (char *)NULL));
		RET("nproc.exec.still.crowded", execl("/no-such-program", "x", (char *)NULL));
		exit(0);
	}
	SHOW("nproc.exec.status2", "%d", wait_status(pid));
	kill(other, 9);
	SHOW("nproc.other.status", "%d", wait_status(other));

	/* prlimit on another process: allowed when the caller's real ids are
	 * all of the target's ids (root's CAP_SYS_RESOURCE aside). */
	pid = fork();
	if (pid == 0) {
		int b_ready[2], b_done[2], c_ready[2], c_done[2];
		pipe(b_ready), pipe(b_done), pipe(c_ready), pipe(c_done);
		pid_t other = fork();
		if (other == 0) {
			setgid(777);
			setuid(54321);
			write(b_ready[1], "r", 1);
			read(b_done[0], &c, 1);
			struct rlimit l = {8, 8};
			RET("other.prlimit.parent", prlimit(getppid(), RLIMIT_NOFILE, &l, NULL));
			exit(0);
		}
		RET("prl.setuid", setuid(54321));
		pid_t same = fork();
		if (same == 0) {
			write(c_ready[1], "r", 1);
			read(c_done[0], &c, 1);
			show_limit("same.nofile", RLIMIT_NOFILE);
			exit(0);
		}
		read(b_ready[0], &c, 1);
		read(c_ready[0], &c, 1);
		struct rlimit l = {12, 40}, old;
		RET("prlimit.same", prlimit(same, RLIMIT_NOFILE, &l, &old));
		SHOW("prlimit.same.old", "%lld %lld", (long long)old.rlim_cur, (long long)old.rlim_max);
		RET("prlimit.other", prlimit(other, RLIMIT_NOFILE, &l, NULL));
		RET("prlimit.other.read", prlimit(other, RLIMIT_NOFILE, NULL, &old));
		write(c_done[1], "d", 1);
		SHOW("same.status", "%d", wait_status(same));
		write(b_done[1], "d", 1);
		SHOW("other.status", "%d", wait_status(other));
		show_limit("prl.nofile", RLIMIT_NOFILE);
		exit(0);
	}
	SHOW("prl.status", "%d", wait_status(pid));
	show_limit("nofile.after", RLIMIT_NOFILE);
	return 0;
}
