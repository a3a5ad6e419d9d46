/* Microbenchmarks run as /init by tests/bench_test.go on our kernel and on
 * Linux in the same QEMU machine: each operation is timed in the guest
 * with CLOCK_MONOTONIC, three rounds, and the best round's ns per operation
 * printed as "bench NAME NS". Run as "/init exit" it exits at once (the
 * program that fork+exec+wait executes). */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what) {
	perror(what);
	exit(1);
}

static void null_syscall(int n) {
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* null_syscall_2threads: two threads make n null system calls each at
 * once, on two harts when the machine has them. Its figure is the time
 * per call of each thread: null_syscall's when calls on two harts do not
 * slow each other down, twice that when they run one at a time. */
static int calls_per_thread;

static void *null_syscall_thread(void *arg) {
	(void)arg;
	null_syscall(calls_per_thread);
	return NULL;
}

static void null_syscall_2threads(int n) {
	pthread_t t[2];
	calls_per_thread = n;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, null_syscall_thread, NULL))
			die("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void clock_read(int n) {
	struct timespec t;
	for (int i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
}

static void fork_exit_wait(int n) {
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (p == 0)
			_exit(0);
		if (waitpid(p, NULL, 0) != p)
			die("waitpid");
	}
}

static void fork_exec_wait(int n) {
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			char *argv[] = {"/init", "exit", NULL};
			execv("/init", argv);
			_exit(127);
		}
		int status;
		if (waitpid(p, &status, 0) != p || status != 0)
			die("fork+exec");
	}
}

/* open_fstat_close is what nginx does with the file of each request. */
static void open_fstat_close(int n) {
	struct stat st;
	for (int i = 0; i < n; i++) {
		int fd = open("/init", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			die("open+fstat");
		close(fd);
	}
}

/* epoll_ready waits on an epoll instance with one descriptor ready. */
static void epoll_ready(int n) {
	int ep = epoll_create1(0), ev = eventfd(1, 0);
	if (ep < 0 || ev < 0)
		die("epoll_create1/eventfd");
	struct epoll_event e = {.events = EPOLLIN}, out[8];
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e))
		die("epoll_ctl");
	for (int i = 0; i < n; i++) {
		if (epoll_wait(ep, out, 8, -1) != 1)
			die("epoll_wait");
	}
	close(ev), close(ep);
}

/* ping_pong sends one byte back and forth n times between this process and
 * a child over a pair of channels: fds[0] parent->child, fds[1] child->parent. */
static void ping_pong(int n, int to_child[2], int to_parent[2]) {
	pid_t p = fork();
	if (p < 0)
		die("fork");
	char c = 'x';
	if (p == 0) {
		for (int i = 0; i < n; i++) {
			if (read(to_child[0], &c, 1) != 1 || write(to_parent[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < n; i++) {
		if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
			die("ping-pong");
	}
	waitpid(p, NULL, 0);
}

static void pipe_ping_pong(int n) {
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		die("pipe");
	ping_pong(n, a, b);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

static void socketpair_ping_pong(int n) {
	int s[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair");
	/* One socket each way: the parent writes s[0] and reads s[0]. */
	int to_child[2] = {s[1], s[0]}, to_parent[2] = {s[0], s[1]};
	ping_pong(n, to_child, to_parent);
	close(s[0]), close(s[1]);
}

/* loopback_up brings lo up: Linux starts /init with it down. */
static void loopback_up(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		die("socket");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		die("SIOCGIFFLAGS lo");
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			die("SIOCSIFFLAGS lo");
	}
	close(s);
}

/* tcp_ping_pong sends one byte back and forth over a TCP connection on
 * 127.0.0.1 (TCP_NODELAY on both ends). */
/* loopback_listener listens on a free port of 127.0.0.1; a is its address. */
static int loopback_listener(int backlog, struct sockaddr_in *a) {
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof *a;
	if (bind(l, (struct sockaddr *)a, sizeof *a) || listen(l, backlog) ||
	    getsockname(l, (struct sockaddr *)a, &len))
		die("listen");
	return l;
}

static void tcp_ping_pong(int n) {
	struct sockaddr_in a;
	int l = loopback_listener(1, &a), c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0)
		die("socket");
	if (connect(c, (struct sockaddr *)&a, sizeof a))
		die("connect");
	int s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	int one = 1;
	if (setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
	    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
		die("TCP_NODELAY");
	/* The parent writes and reads c, the child s. */
	int to_child[2] = {s, c}, to_parent[2] = {c, s};
	ping_pong(n, to_child, to_parent);
	close(s), close(c), close(l);
}

/* tcp_connect_close opens a TCP connection on 127.0.0.1, accepts it and
 * closes both ends, the accepted one first (as nginx does). */
static void tcp_connect_close(int n) {
	struct sockaddr_in a;
	int l = loopback_listener(128, &a);
	for (int i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
			die("connect");
		int s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		close(s), close(c);
	}
	close(l);
}

static void run(const char *name, void (*fn)(int), int n) {
	fn(n / 10 + 1); /* warm up */
	int64_t best = INT64_MAX;
	for (int round = 0; round < 3; round++) {
		int64_t t0 = now();
		fn(n);
		int64_t d = now() - t0;
		if (d < best)
			best = d;
	}
	printf("bench %s %.1f\n", name, (double)best / n);
	fflush(stdout);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "exit") == 0)
		return 0;
	run("null_syscall", null_syscall, 2000);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		run("null_syscall_2threads", null_syscall_2threads, 20000);
	run("clock_gettime", clock_read, 20000);
	run("fork_exit_wait", fork_exit_wait, 50);
	run("fork_exec_wait", fork_exec_wait, 30);
	run("pipe_ping_pong", pipe_ping_pong, 500);
	run("socketpair_ping_pong", socketpair_ping_pong, 500);
	loopback_up();
	run("tcp_ping_pong", tcp_ping_pong, 500);
	run("open_fstat_close", open_fstat_close, 2000);
	run("epoll_ready", epoll_ready, 2000);
	run("tcp_connect_close", tcp_connect_close, 200);
	printf("bench done\n");
	/* Linux prints its panic at init's exit at once, and the console's
	 * pending output after it: wait until it is out. */
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	return 0;
}
