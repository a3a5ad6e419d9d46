/* Issue 7's programs that tried to exhaust the kernel, each in a child
 * running as uid 1000: the kernel answers with an errno or kills the child,
 * and never panics. init reports each outcome, then shows memory came
 * back (tests/oom_test.go). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *name, long ret, int err) {
	if (ret < 0)
		printf("hostile: %s: error %s\n", name, strerrorname_np(err));
	else
		printf("hostile: %s: ok %ld\n", name, ret);
	fflush(stdout);
}

/* Two reads of 0x7ffff000 bytes of /dev/zero into untouched memory. */
static long read_2g(void) {
	int fd = open("/dev/zero", O_RDONLY);
	char *buf = mmap(NULL, 0x7ffff000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		return -1;
	long total = 0;
	for (int i = 0; i < 2; i++) {
		long n = read(fd, buf, 0x7ffff000);
		if (n < 0)
			return -1;
		total += n;
	}
	return total;
}

/* 1 MiB files until the tree is full; the error that stopped it is
 * reported, then every file is removed. */
static long fill_files(void) {
	static char mib[1 << 20];
	memset(mib, 'f', sizeof mib);
	long files = 0;
	int err = 0;
	for (;; files++) {
		char name[32];
		snprintf(name, sizeof name, "f%ld", files);
		int fd = open(name, O_CREAT | O_WRONLY, 0600);
		if (fd < 0) {
			err = errno;
			break;
		}
		long n = write(fd, mib, sizeof mib);
		if (n != sizeof mib) {
			err = n < 0 ? errno : ENOSPC;
			close(fd);
			break;
		}
		close(fd);
	}
	printf("hostile: files: %s after %s MiB\n", strerrorname_np(err), files >= 32 ? "32 or more" : "fewer than 32");
	for (long i = 0; i <= files; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%ld", i);
		unlink(name);
	}
	return files;
}

/* Four times: 32 MiB into a file unlinked while open, then closed. Each
 * close gives the pages back, so all four fit under the tree's limit. */
static long unlinked_files(void) {
	static char mib[1 << 20];
	memset(mib, 'u', sizeof mib);
	for (int round = 0; round < 4; round++) {
		int fd = open("u", O_CREAT | O_RDWR, 0600);
		if (fd < 0 || unlink("u") != 0)
			return -1;
		for (int i = 0; i < 32; i++)
			if (write(fd, mib, sizeof mib) != sizeof mib)
				return -1;
		close(fd);
	}
	return 4;
}

/* 500 socketpairs, each filled until it would block. */
static long fill_sockets(void) {
	static char chunk[64 << 10];
	long bytes = 0;
	for (int i = 0; i < 500; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
			return -1;
		for (;;) {
			long n = write(sv[0], chunk, sizeof chunk);
			if (n < 0) {
				if (errno != EAGAIN)
					return -1;
				break;
			}
			bytes += n;
		}
	}
	return bytes > 0 ? 500 : -1;
}

/* 20000 forks past RLIMIT_NPROC: each fails, and none may leak. */
static long failed_forks(void) {
	struct rlimit { unsigned long cur, max; } one = {1, 1};
	syscall(164 /* setrlimit */, 6 /* RLIMIT_NPROC */, &one);
	long failed = 0;
	for (int i = 0; i < 20000; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 && errno == EAGAIN)
			failed++;
		else if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return failed;
}

static long mem_available_kib(void) {
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static long mem_available_kib(void);

static void run(const char *name, long (*fn)(void)) {
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir("/scratch") != 0 || setgid(1000) != 0 || setuid(1000) != 0)
			_exit(99);
		errno = 0;
		long ret = fn();
		report(name, ret, errno);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("hostile: %s: killed by signal %d\n", name, WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0)
		printf("hostile: %s: exit %d\n", name, WEXITSTATUS(status));
	fflush(stdout);
	fprintf(stderr, "hostile: MemAvailable %ld kB\n", mem_available_kib());
}

int main(void) {
	mkdir("/scratch", 0777);
	chmod("/scratch", 0777);
	long before = mem_available_kib();
	run("read 2 x 0x7ffff000 from /dev/zero", read_2g);
	run("1 MiB files until full", fill_files);
	run("4 x 32 MiB into unlinked open files", unlinked_files);
	run("500 socketpairs filled", fill_sockets);
	run("20000 forks past RLIMIT_NPROC", failed_forks);
	long after = mem_available_kib();
	fprintf(stderr, "hostile: MemAvailable %ld kB before, %ld kB after\n", before, after);
	/* Most of the machine: only if what the children took came back,
	 * the removed files' pages and the sockets' buffers included. */
	char *q = malloc(224 << 20);
	memset(q, 2, 224 << 20);
	printf("hostile: init allocates 224 MiB: %d\n", q[12345]);
	return 0;
}
