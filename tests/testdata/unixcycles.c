/* Unix sockets sent over themselves (SCM_RIGHTS) and closed, 20,000
 * times, as a program that leaks them in a loop would: no descriptor
 * refers to them and no one can receive them. Linux's collector frees
 * them; here, what they hold must not stay charged either (it did, until
 * every later send failed with ENOBUFS), and every send must succeed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int sendfd(int s, int fd) {
	char c = 'x';
	struct iovec iov = {&c, 1};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof fd);
	return sendmsg(s, &m, 0);
}

/* charged is the kernel-wide charge in kB, from /proc/meminfo. */
static long charged(void) {
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Charged: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

int main(void) {
	long before = charged(), failed = 0;
	for (int i = 0; i < 20000; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, i % 2 ? SOCK_STREAM : SOCK_DGRAM, 0, sv) != 0) {
			failed++;
			continue;
		}
		failed += sendfd(sv[0], sv[1]) < 0; /* each end in the other's queue */
		failed += sendfd(sv[1], sv[0]) < 0;
		close(sv[0]);
		close(sv[1]);
	}
	printf("unixcycles: 20000 pairs, failed sends %ld\n", failed);
	printf("unixcycles: charged after: %ld kB more than before\n", charged() - before);
	return 0;
}
