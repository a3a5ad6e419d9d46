/* soak: /init for tests/soak_test.go TestSoak (issue 34). It starts
 * Debian's nginx with the rootfs's configuration and, once the host asks
 * for /soak-start (nginx's access log shows it), runs issue 34's hostile
 * programs beside it, round after round, until the host asks for
 * /soak-stop:
 *  - sockfill: 450 Unix socketpairs written full from both ends, then 300
 *    pipes of 1 MiB, held full for a second;
 *  - epoll loops: instances watching each other, and chains deeper than
 *    EP_MAX_NESTS, attempted;
 *  - closes under blocked calls: one thread blocked in read on a pipe,
 *    accept on a Unix socket or epoll_wait while another closes the
 *    descriptor, which returns only what comes afterwards.
 * The three run at once, each in its own process as uid 1000, and each
 * checks it met Linux's answers. Every round prints one "soak: round"
 * line; a wrong answer prints "soak: FAIL". After /soak-stop, each
 * /soak-reclaim drops the kernel's caches (/proc/sys/vm/drop_caches). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NGINX "/usr/sbin/nginx"
#define ACCESS_LOG "/var/log/nginx/access.log"
#define HOSTILE_UID 1000
#define PAIRS 450
#define PIPES 300
#define SNDBUF_MAX 212992 /* Linux's default SO_SNDBUF, net.core.wmem_default */
#define EPOLL_ATTEMPTS 200
#define CLOSE_ROUNDS 30

/* What the hostile programs report, in memory shared with init. */
struct report {
	long sock_eagain, sock_nobufs, sock_nomem, sock_other;
	long pipe_eagain, pipe_nomem, pipe_other;
	long loops_refused, epoll_wrong;
	long closes, close_wrong, close_retries;
	char wrong[256]; /* the first wrong answer */
};

static struct report *rep;
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

static void wrong(long *count, const char *fmt, ...) {
	if (__atomic_fetch_add(count, 1, __ATOMIC_RELAXED) == 0 && rep->wrong[0] == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(rep->wrong, sizeof rep->wrong, fmt, ap);
		va_end(ap);
	}
}

/* ---- sockfill ---- */

static void sockfill(void) {
	static char chunk[64 << 10];
	static int fds[PAIRS][2], pipes[PIPES][2];
	for (int i = 0; i < PAIRS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds[i]) != 0) {
			wrong(&rep->sock_other, "socketpair %d: %s", i, strerrorname_np(errno));
			break;
		}
		for (int end = 0; end < 2; end++) {
			long queued = 0, n;
			while ((n = write(fds[i][end], chunk, sizeof chunk)) > 0 && (queued += n) <= SNDBUF_MAX)
				;
			if (n > 0)
				wrong(&rep->sock_other, "an end queued %ld bytes", queued);
			else if (errno == EAGAIN)
				rep->sock_eagain++;
			else if (errno == ENOBUFS)
				rep->sock_nobufs++;
			else if (errno == ENOMEM)
				rep->sock_nomem++;
			else
				wrong(&rep->sock_other, "socket write: %s", strerrorname_np(errno));
		}
	}
	sleep(1);
	for (int i = 0; i < PAIRS; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	for (int i = 0; i < PIPES; i++) {
		if (pipe2(pipes[i], O_NONBLOCK) != 0) {
			wrong(&rep->pipe_other, "pipe %d: %s", i, strerrorname_np(errno));
			break;
		}
		if (fcntl(pipes[i][1], F_SETPIPE_SZ, 1 << 20) < 0 && errno != ENOMEM && errno != EPERM)
			wrong(&rep->pipe_other, "F_SETPIPE_SZ: %s", strerrorname_np(errno));
		long n;
		while ((n = write(pipes[i][1], chunk, sizeof chunk)) > 0)
			;
		if (errno == EAGAIN)
			rep->pipe_eagain++;
		else if (errno == ENOMEM)
			rep->pipe_nomem++;
		else
			wrong(&rep->pipe_other, "pipe write: %s", strerrorname_np(errno));
	}
	sleep(1);
}

/* ---- epoll loops ---- */

static int watch(int ep, int fd) {
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* refused checks that a watch closing a loop or too deep a chain failed
 * with ELOOP. */
static void refused(int ret, const char *what) {
	if (ret == -1 && errno == ELOOP)
		rep->loops_refused++;
	else
		wrong(&rep->epoll_wrong, "%s: %d %s", what, ret, ret == -1 ? strerrorname_np(errno) : "");
}

static void epoll_loops(void) {
	for (int i = 0; i < EPOLL_ATTEMPTS; i++) {
		int a = epoll_create1(0), b = epoll_create1(0), c = epoll_create1(0);
		if (a < 0 || b < 0 || c < 0 || watch(a, b) != 0 || watch(b, c) != 0) {
			wrong(&rep->epoll_wrong, "epoll set-up: %s", strerrorname_np(errno));
			break;
		}
		refused(watch(b, a), "a loop of two");
		refused(watch(c, a), "a loop of three");
		if (watch(a, a) != -1 || errno != EINVAL)
			wrong(&rep->epoll_wrong, "an instance watching itself: not EINVAL");
		/* A chain of six: the top one watches five levels below it. */
		int e[6];
		e[0] = epoll_create1(0);
		for (int k = 1; k < 6; k++) {
			e[k] = epoll_create1(0);
			int ret = watch(e[k], e[k - 1]);
			if (k < 5 && ret != 0)
				wrong(&rep->epoll_wrong, "chain level %d: %s", k, strerrorname_np(errno));
			if (k == 5)
				refused(ret, "a chain deeper than EP_MAX_NESTS");
		}
		struct epoll_event ev;
		if (epoll_wait(a, &ev, 1, 0) != 0)
			wrong(&rep->epoll_wrong, "epoll_wait on the loop's top: %s", strerrorname_np(errno));
		for (int k = 0; k < 6; k++)
			close(e[k]);
		close(a);
		close(b);
		close(c);
	}
}

/* ---- closes under blocked calls ---- */

static int blocked_fd, blocked_tid;
static long blocked_ret;

/* wait_blocked waits until the thread blocked_tid sleeps in its call
 * (state S in /proc), so that the close comes while it is blocked. */
static void wait_blocked(void) {
	char path[64], stat[256];
	for (int i = 0; i < 5000; i++) {
		int tid = __atomic_load_n(&blocked_tid, __ATOMIC_ACQUIRE);
		if (tid != 0) {
			snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
			int fd = open(path, O_RDONLY);
			ssize_t n = fd < 0 ? -1 : read(fd, stat, sizeof stat - 1);
			if (fd >= 0)
				close(fd);
			char *end = n > 0 ? (stat[n] = 0, strrchr(stat, ')')) : NULL;
			if (end && end[1] == ' ' && end[2] == 'S')
				return;
		}
		usleep(1000);
	}
	wrong(&rep->close_wrong, "the thread never blocked");
}

static void *do_read(void *arg) {
	__atomic_store_n(&blocked_tid, gettid(), __ATOMIC_RELEASE);
	char buf[32];
	blocked_ret = read(blocked_fd, buf, sizeof buf);
	return NULL;
}

static void *do_accept(void *arg) {
	__atomic_store_n(&blocked_tid, gettid(), __ATOMIC_RELEASE);
	blocked_ret = accept(blocked_fd, NULL, NULL);
	return NULL;
}

static void *do_epoll_wait(void *arg) {
	__atomic_store_n(&blocked_tid, gettid(), __ATOMIC_RELEASE);
	struct epoll_event ev;
	/* No timeout: a lost wake-up hangs the child until alarm ends it, and
	 * a child starved on a loaded machine is not mistaken for one. */
	blocked_ret = epoll_wait(blocked_fd, &ev, 1, -1);
	return NULL;
}

/* closed_under starts fn blocked on fd, closes fd, makes the call's
 * answer arrive with after(), and checks the call returned want. */
static void closed_under(void *(*fn)(void *), int fd, void (*after)(void), long want, const char *what) {
	pthread_t th;
	blocked_fd = fd;
	blocked_tid = 0;
	blocked_ret = -2;
	if (pthread_create(&th, NULL, fn, NULL) != 0) {
		wrong(&rep->close_wrong, "pthread_create: %s", strerrorname_np(errno));
		return;
	}
	wait_blocked();
	if (close(fd) != 0)
		wrong(&rep->close_wrong, "%s: close: %s", what, strerrorname_np(errno));
	after();
	pthread_join(th, NULL);
	rep->closes++;
	if (want >= 0 ? blocked_ret != want : blocked_ret < 0)
		wrong(&rep->close_wrong, "%s returned %ld", what, blocked_ret);
	if (blocked_ret > 2 && fn == do_accept)
		close(blocked_ret);
}

static int pipe_w;

/* write_pipe makes the blocked call's answer arrive. While sockfill,
 * beside it, holds the kernel-wide budget the write is ENOMEM (a pipe
 * page is charged, as Linux's pipe_write fails when it gets no page):
 * it is tried again until sockfill gives the budget back, and counted.
 * Unretried, that ENOMEM left the reader blocked until the alarm: the
 * rounds that failed before with "epoll_wait returned 0" or SIGALRM. */
static void write_pipe(void) {
	for (int i = 0; i < 3000; i++) {
		if (write(pipe_w, "after close", 11) == 11)
			return;
		if (errno != ENOMEM)
			break;
		rep->close_retries++;
		usleep(10 * 1000);
	}
	wrong(&rep->close_wrong, "write of the pipe after close: %s", strerrorname_np(errno));
}

static struct sockaddr_un sun;
static int connected;
static void connect_socket(void) {
	connected = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(connected, (struct sockaddr *)&sun, sizeof sun) != 0)
		wrong(&rep->close_wrong, "connect while accept holds the socket: %s", strerrorname_np(errno));
}

static void closes_under_blocked(void) {
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "/tmp/soak-%d.sock", getpid());
	for (int i = 0; i < CLOSE_ROUNDS; i++) {
		int p[2];
		pipe(p);
		pipe_w = p[1];
		closed_under(do_read, p[0], write_pipe, 11, "read of a pipe");
		close(p[1]);

		int l = socket(AF_UNIX, SOCK_STREAM, 0);
		unlink(sun.sun_path);
		if (bind(l, (struct sockaddr *)&sun, sizeof sun) != 0 || listen(l, 4) != 0)
			wrong(&rep->close_wrong, "bind or listen: %s", strerrorname_np(errno));
		closed_under(do_accept, l, connect_socket, -1, "accept");
		close(connected);

		pipe(p);
		pipe_w = p[1];
		int e = epoll_create1(0);
		watch(e, p[0]);
		closed_under(do_epoll_wait, e, write_pipe, 1, "epoll_wait");
		close(p[0]);
		close(p[1]);
	}
	unlink(sun.sun_path);
}

/* ---- init ---- */

/* hostile runs fn in a child as uid HOSTILE_UID and returns its pid. */
static pid_t hostile(void (*fn)(void)) {
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit nofile = {2048, 2048};
		if (setrlimit(RLIMIT_NOFILE, &nofile) != 0 || setgid(HOSTILE_UID) != 0 || setuid(HOSTILE_UID) != 0)
			_exit(2);
		alarm(120); /* a call that never returns ends the child: the round fails */
		fn();
		_exit(0);
	}
	return pid;
}

/* Where the access log was read up to, and the end of what was read. */
static off_t log_offset;
static char log_tail[64];

/* requested reports whether nginx's access log shows a request for path
 * since the last call. */
static int requested(const char *path) {
	int fd = open(ACCESS_LOG, O_RDONLY);
	if (fd < 0)
		return 0;
	char needle[64], buf[sizeof log_tail + 65536];
	snprintf(needle, sizeof needle, "GET %s ", path);
	int found = 0;
	for (;;) {
		size_t keep = strlen(log_tail);
		memcpy(buf, log_tail, keep);
		ssize_t n = pread(fd, buf + keep, 65536, log_offset);
		if (n <= 0)
			break;
		log_offset += n;
		buf[keep + n] = 0;
		found |= memmem(buf, keep + n, needle, strlen(needle)) != NULL;
		size_t tail = keep + n < sizeof log_tail - 1 ? keep + n : sizeof log_tail - 1;
		memcpy(log_tail, buf + keep + n - tail, tail);
		log_tail[tail] = 0;
	}
	close(fd);
	return found;
}

static void reap(void) {
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == nginx) {
			say("soak: FAIL: nginx exited with status %#x", status);
			exit(1);
		}
}

static long charged_kib(void) {
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Charged: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(void) {
	rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED)
		return 1;
	nginx = fork();
	if (nginx == 0) {
		execl(NGINX, "nginx", (char *)NULL);
		_exit(127);
	}
	say("soak: nginx %d started", nginx);
	while (!requested("/soak-start")) {
		reap();
		usleep(200 * 1000);
	}
	say("soak: hostile programs started; charged %ld kB", charged_kib());
	int rounds = 0, failed = 0;
	while (!requested("/soak-stop")) {
		memset(rep, 0, sizeof *rep);
		pid_t kids[3] = {hostile(sockfill), hostile(epoll_loops), hostile(closes_under_blocked)};
		const char *names[3] = {"sockfill", "epoll loops", "closes under blocked calls"};
		int bad = 0;
		for (int i = 0; i < 3; i++) {
			int status;
			while (waitpid(kids[i], &status, 0) < 0 && errno == EINTR)
				;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				say("soak: FAIL: round %d: %s ended with status %#x", rounds + 1, names[i], status);
				bad = 1;
			}
		}
		reap();
		rounds++;
		say("soak: round %d: socket ends EAGAIN %ld, ENOBUFS %ld, ENOMEM %ld, other %ld; pipes EAGAIN %ld, ENOMEM %ld, "
		    "other %ld; epoll loops refused %ld, wrong %ld; closes under blocked calls %ld, wrong %ld, pipe writes retried for ENOMEM %ld",
		    rounds, rep->sock_eagain, rep->sock_nobufs, rep->sock_nomem, rep->sock_other, rep->pipe_eagain,
		    rep->pipe_nomem, rep->pipe_other, rep->loops_refused, rep->epoll_wrong, rep->closes, rep->close_wrong,
		    rep->close_retries);
		if (rep->wrong[0]) {
			say("soak: FAIL: round %d: %s", rounds, rep->wrong);
			bad = 1;
		}
		failed += bad;
	}
	say("soak: stopped after %d rounds, %d failed; charged %ld kB", rounds, failed, charged_kib());
	/* /soak-reclaim: the kernel's caches dropped, as an administrator
	 * would on Linux before reading what the kernel still holds. */
	for (;;) {
		reap();
		if (requested("/soak-reclaim")) {
			int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
			if (fd < 0 || write(fd, "3", 1) != 1)
				say("soak: FAIL: drop_caches: %s", strerror(errno));
			else
				say("soak: caches dropped");
			if (fd >= 0)
				close(fd);
		}
		usleep(200 * 1000);
	}
}
