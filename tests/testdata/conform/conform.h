/* Helpers for the differential conformance programs (tests/conform_test.go).
 * Each program prints one line per checked behaviour, "name: result", and is
 * run both on the kernel and under qemu-riscv64 on Linux; the lines must
 * match. Print only what Linux defines: no pids, addresses or times. A
 * program works in its current directory (a fresh scratch directory on
 * Linux, / on the kernel) and names files relatively. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* RET prints a call's result: its value, or -1 and the errno's name. */
#define RET(name, call)                                                        \
	do {                                                                   \
		errno = 0;                                                     \
		long ret_ = (long)(call);                                      \
		if (ret_ == -1)                                                \
			printf("%s: -1 %s\n", name, strerrorname_np(errno));   \
		else                                                           \
			printf("%s: %ld\n", name, ret_);                       \
		fflush(stdout);                                                \
	} while (0)

/* SHOW prints a value computed by the program. */
#define SHOW(name, fmt, ...)                                                   \
	do {                                                                   \
		printf("%s: " fmt "\n", name, __VA_ARGS__);                    \
		fflush(stdout);                                                \
	} while (0)

/* BAD is an address no program maps; a volatile read keeps the compiler
 * from proving the pointer bad at compile time. */
static void *volatile bad_address_ = (void *)8;
#define BAD (bad_address_)

/* deadline_ms is clock's time ms milliseconds from now: an absolute
 * timeout for futexes, condition variables and semaphores. */
static inline struct timespec deadline_ms(clockid_t clock, long ms) {
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

/* show_file prints the first line of a file (a /proc setting) as name's
 * result. */
static inline void show_file(const char *name, const char *path) {
	char buf[256] = {0};
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		read(fd, buf, sizeof buf - 1);
		close(fd);
	}
	buf[strcspn(buf, "\n")] = 0;
	SHOW(name, "%s", buf);
}

/* put_file writes text to a file (a /proc setting) and prints what the
 * write returned. */
static inline void put_file(const char *name, const char *path, const char *text) {
	int fd = open(path, O_WRONLY);
	RET(name, write(fd, text, strlen(text)));
	if (fd >= 0)
		close(fd);
}

/* run_child runs f in a child process, its output flushed, and returns
 * the child's wait status. */
static inline int run_child(void (*f)(void)) {
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		f();
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	return st;
}

/* meminfo_value is a /proc/meminfo field's number (kB for sizes); -1
 * when /proc/meminfo has no such field. */
static inline long meminfo_value(const char *field) {
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, field, strlen(field)) == 0)
			sscanf(line + strlen(field), " %ld", &v);
	fclose(f);
	return v;
}

/* show_hugepages prints the default huge page pool's counts. */
static inline void show_hugepages(const char *name) {
	printf("%s: total %ld free %ld rsvd %ld surp %ld\n", name, meminfo_value("HugePages_Total:"),
	       meminfo_value("HugePages_Free:"), meminfo_value("HugePages_Rsvd:"), meminfo_value("HugePages_Surp:"));
	fflush(stdout);
}
