/* SO_SNDBUF and SO_RCVBUF of Unix stream sockets: the defaults, setsockopt
 * doubling a request and raising it to the minimum, and a non-blocking
 * writer stopped with EAGAIN at its SO_SNDBUF (issue 34). How many bytes
 * Linux takes before EAGAIN depends on its skb overhead, so only bounds
 * are printed. Requests stay below wmem_max, which the host may raise. */
#include "../conform.h"
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static int option(int fd, int name) {
	int v = -1;
	socklen_t len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0)
		return -errno;
	return v;
}

static int set_option(int fd, int name, int v) {
	return setsockopt(fd, SOL_SOCKET, name, &v, sizeof v);
}

static int writable(int fd) {
	struct pollfd p = {fd, POLLOUT, 0};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

/* fill writes chunk bytes at a time until the socket refuses; it
 * returns the bytes taken and leaves the errno of the refusal in *err. */
static long fill(int fd, size_t chunk, int *err) {
	static char buf[64 << 10];
	long total = 0;
	for (;;) {
		long n = write(fd, buf, chunk);
		if (n < 0) {
			*err = errno;
			return total;
		}
		total += n;
		if (total > (8 << 20)) {
			*err = 0;
			return total;
		}
	}
}

int main(void) {
	int sv[2];
	RET("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	SHOW("default SO_SNDBUF", "%d", option(sv[0], SO_SNDBUF));
	SHOW("default SO_RCVBUF", "%d", option(sv[0], SO_RCVBUF));
	RET("set SO_SNDBUF 65536", set_option(sv[0], SO_SNDBUF, 65536));
	SHOW("SO_SNDBUF after 65536", "%d", option(sv[0], SO_SNDBUF));
	RET("set SO_SNDBUF 100000", set_option(sv[1], SO_SNDBUF, 100000));
	SHOW("SO_SNDBUF after 100000", "%d", option(sv[1], SO_SNDBUF));
	RET("set SO_SNDBUF 1", set_option(sv[1], SO_SNDBUF, 1));
	SHOW("SO_SNDBUF after 1", "%d", option(sv[1], SO_SNDBUF));
	RET("set SO_RCVBUF 1", set_option(sv[1], SO_RCVBUF, 1));
	SHOW("SO_RCVBUF after 1", "%d", option(sv[1], SO_RCVBUF));
	RET("set SO_RCVBUF 50000", set_option(sv[0], SO_RCVBUF, 50000));
	SHOW("SO_RCVBUF after 50000", "%d", option(sv[0], SO_RCVBUF));
	RET("set SO_SNDBUF with 2 bytes", setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, "ab", 2));

	/* sv[0] sends with SO_SNDBUF 131072; its peer's tiny SO_RCVBUF does
	 * not bound a stream. */
	int err = 0;
	long taken = fill(sv[0], 4096, &err);
	SHOW("4 KiB writes end in", "%s", err ? strerrorname_np(err) : "no error");
	SHOW("taken at least a quarter of SO_SNDBUF", "%d", taken >= 131072 / 4);
	SHOW("taken at most SO_SNDBUF plus a write", "%d", taken <= 131072 + 4096);
	SHOW("writable when full", "%d", writable(sv[0]));
	int pending = -1;
	RET("FIONREAD of the peer", ioctl(sv[1], FIONREAD, &pending));
	SHOW("peer holds what was taken", "%d", pending == taken);
	static char sink[64 << 10];
	long drained = 0;
	for (long n; (n = read(sv[1], sink, sizeof sink)) > 0;)
		drained += n;
	SHOW("peer reads it all", "%d", drained == taken);
	SHOW("writable when drained", "%d", writable(sv[0]));
	long again = fill(sv[0], 65536, &err);
	SHOW("64 KiB writes end in", "%s", err ? strerrorname_np(err) : "no error");
	SHOW("taken again at least a quarter of SO_SNDBUF", "%d", again >= 131072 / 4);
	SHOW("taken again at most SO_SNDBUF plus a write", "%d", again <= 131072 + 65536);

	/* The default sized end in the other direction. */
	taken = fill(sv[1], 65536, &err);
	SHOW("SO_SNDBUF 4608 end: 64 KiB writes end in", "%s", err ? strerrorname_np(err) : "no error");
	SHOW("SO_SNDBUF 4608 end takes at most 64 KiB plus SO_SNDBUF", "%d", taken <= 65536 + 4608);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
