/* A writev to a TCP socket whose second iovec is a bad address, the
 * sender's buffer made as small as it goes (SO_SNDBUF 0, which Linux
 * raises to SOCK_MIN_SNDBUF): Linux sends the first iovec's bytes,
 * waiting for room as the peer takes them, and returns how many. Ours
 * gave netstack a buffer of 0 bytes, and the write waited for ever (make
 * fuzz at -smp 4, seed 12). Linux itself is the oracle: lo is brought up
 * first, as its initramfs leaves it down. */
#include "../../conform/conform.h"
#include "../loopback.h"
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

static char buf[1 << 20];

int main(void) {
	loopback_up();
	int sv[2], zero = 0;
	tcp_pair(sv);
	RET("sndbuf.zero", setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &zero, sizeof zero));
	struct iovec iov[3] = {{buf, 65537}, {NULL, 5}, {buf, 7}};
	int size;
	socklen_t len = sizeof size;
	getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, &len);
	SHOW("sndbuf.zero.size", "%d", size);
	/* How much of the first iovec is sent is the implementation's (Linux
	 * drops the segment the fault fell in: 65520); some of it is. */
	long sent = writev(sv[0], iov, 3);
	SHOW("writev.bad.second.sent.some", "%d", sent > 0 && sent <= 65537);
	shutdown(sv[0], SHUT_WR);
	long got = 0, r;
	while ((r = read(sv[1], buf, sizeof buf)) > 0)
		got += r;
	SHOW("peer.got.all", "%d", got == sent);
	return 0;
}
