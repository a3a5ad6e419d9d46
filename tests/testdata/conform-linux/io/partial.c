/* Reads into a buffer that ends at an unmapped page: Linux copies what
 * fits, returns that count and leaves the rest of a pipe's or a socket's
 * data for the next read (qemu-user checks the whole buffer first, so
 * Linux itself is the oracle). */
#include "../../conform/conform.h"
#include <sys/mman.h>
#include <sys/socket.h>

int main(void) {
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p + 4096, 4096);
	char *edge = p + 4096 - 6; /* 6 bytes writable, then a hole */
	char buf[16] = {0};

	int fds[2];
	pipe(fds);
	write(fds[1], "0123456789", 10);
	RET("pipe.read.partial", read(fds[0], edge, 10));
	SHOW("pipe.read.partial.data", "%.6s", edge);
	RET("pipe.read.rest", read(fds[0], buf, sizeof buf));
	SHOW("pipe.read.rest.data", "%.4s", buf);
	RET("pipe.read.all.bad", (write(fds[1], "ab", 2), read(fds[0], p + 4096, 2)));
	RET("pipe.read.kept", read(fds[0], buf, sizeof buf));

	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[0], "abcdefghij", 10);
	RET("socket.read.partial", read(sv[1], edge, 10));
	RET("socket.read.rest", read(sv[1], buf, sizeof buf));
	SHOW("socket.read.rest.data", "%.4s", buf);
	return 0;
}
