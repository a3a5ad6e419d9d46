/* A static glibc program run as /init by tests/kernel_test.go: it exercises
 * glibc's start-up, stdio, malloc (brk and mmap), file reads from the
 * initramfs and a write from a bad pointer, then exits with status 42. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(int argc, char **argv) {
	struct utsname u;
	if (uname(&u) != 0)
		return 1;
	printf("hello from static glibc: %s %s, argv[0]=%s, pid %d\n", u.sysname, u.machine, argv[0], getpid());

	size_t big = 4 << 20;
	char *p = malloc(big);
	if (p == NULL)
		return 2;
	memset(p, 7, big);
	long sum = 0;
	for (size_t i = 0; i < big; i += 4096)
		sum += p[i];
	free(p);
	printf("malloc: touched %zu KiB, sum %ld\n", big >> 10, sum);

	char buf[128];
	int fd = open("/etc/motd", O_RDONLY);
	if (fd < 0)
		return 3;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return 4;
	buf[n] = 0;
	printf("motd: %s", buf);

	const char *volatile bad = (const char *)16;
	errno = 0;
	ssize_t r = write(1, bad, 10);
	printf("write from a bad pointer: %zd, errno %d (%s)\n", r, errno, strerror(errno));

	fflush(stdout);
	return 42;
}
