/* pressure: /init for tests/soak_test.go TestNginxUnderPressure. It starts
 * Debian's nginx with the rootfs's configuration and, once the host's
 * requests reach it, runs round after round two hostile programs beside it
 * while the host goes on sending requests:
 *  - a memory hog that touches memory until the kernel's OOM killer ends it;
 *  - a fork bomb, as uid 1000 with RLIMIT_NPROC 64, where every process
 *    forks as fast as it can for a few seconds, then is killed with its
 *    process group.
 * Each round prints one "pressure: round" line with what happened; the
 * host checks nginx never stopped answering. Every wait has a deadline; a
 * failure prints "pressure: FAIL" and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NGINX "/usr/sbin/nginx"
#define ACCESS_LOG "/var/log/nginx/access.log"
#define BOMB_UID 1000
#define BOMB_NPROC 64
#define BOMB_SECONDS 4
#define HOG_SECONDS 120

struct bomb_counts {
	long forks, eagain, other;
};

static pid_t nginx;

static void say(const char *fmt, ...) {
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	write(1, buf, n);
}

static void fail(const char *what) {
	say("pressure: FAIL: %s (%s)", what, strerror(errno));
	exit(1);
}

/* reap collects every exited child without blocking; nginx's master must
 * not be among them. */
static void reap(void) {
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == nginx) {
			say("pressure: FAIL: nginx exited with status %#x", status);
			exit(1);
		}
}

/* hog touches 1 MiB after 1 MiB until it is killed. */
static long hog(void) {
	pid_t pid = fork();
	if (pid < 0)
		fail("fork of the hog");
	if (pid == 0) {
		for (;;) {
			char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				usleep(10000);
				continue;
			}
			memset(p, 0x5a, 1 << 20);
		}
	}
	for (int i = 0; i < HOG_SECONDS * 10; i++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
		reap();
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

/* bomb forks without end in every process of a group of uid BOMB_UID
 * limited to BOMB_NPROC processes, then kills the group. */
static void bomb(struct bomb_counts *c) {
	memset(c, 0, sizeof *c);
	pid_t leader = fork();
	if (leader < 0)
		fail("fork of the bomb");
	if (leader == 0) {
		struct rlimit lim = {BOMB_NPROC, BOMB_NPROC};
		if (setpgid(0, 0) < 0 || setrlimit(RLIMIT_NPROC, &lim) < 0 || setgid(BOMB_UID) < 0 || setuid(BOMB_UID) < 0)
			_exit(2);
		for (;;) {
			pid_t p = fork();
			if (p == 0)
				continue; /* the child forks too */
			if (p > 0)
				__atomic_add_fetch(&c->forks, 1, __ATOMIC_RELAXED);
			else if (errno == EAGAIN)
				__atomic_add_fetch(&c->eagain, 1, __ATOMIC_RELAXED);
			else
				__atomic_add_fetch(&c->other, 1, __ATOMIC_RELAXED);
			if (p < 0)
				usleep(1000);
		}
	}
	for (int i = 0; i < BOMB_SECONDS * 10; i++) {
		reap();
		usleep(100000);
	}
	if (kill(-leader, SIGKILL) < 0)
		fail("kill of the bomb's group");
	/* The killed processes are init's children now: reap them all. */
	for (int i = 0; i < 300; i++) {
		reap();
		if (kill(-leader, 0) < 0 && errno == ESRCH)
			return;
		usleep(100000);
	}
	say("pressure: FAIL: the bomb's group outlived SIGKILL by 30 s");
	exit(1);
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	struct bomb_counts *counts = mmap(NULL, sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counts == MAP_FAILED)
		fail("mmap");
	nginx = fork();
	if (nginx < 0)
		fail("fork of nginx");
	if (nginx == 0) {
		execl(NGINX, "nginx", (char *)NULL);
		fail("exec of nginx");
	}
	say("pressure: nginx %d started", nginx);
	/* The rounds begin once the host's requests reach nginx (its access
	 * log holds a few dozen), so that every round runs under load. */
	struct stat log;
	for (int i = 0; stat(ACCESS_LOG, &log) != 0 || log.st_size < 4096; i++) {
		if (i == 1200) {
			say("pressure: FAIL: no requests reached nginx in 120 s");
			exit(1);
		}
		reap();
		usleep(100000);
	}
	for (int r = 1; r <= rounds; r++) {
		say("pressure: round %d begins", r);
		long sig = hog();
		bomb(counts);
		say("pressure: round %d: hog ended by signal %ld; bomb: %ld forks, %ld refused with EAGAIN, %ld other errors", r,
		    sig, counts->forks, counts->eagain, counts->other);
	}
	say("pressure: done");
	for (;;) {
		reap();
		sleep(1);
	}
}
