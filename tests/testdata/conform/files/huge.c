/* Issue 7's large offsets and lengths that Linux answers the same on any
 * machine: a file grown to 1 GiB by ftruncate and written at 4 and 8 GiB
 * stays sparse (no memory taken for the holes), and a writev of 1024 x
 * 1 MiB to a non-blocking socket takes what the buffer holds. */
#define _FILE_OFFSET_BITS 64
#include "../conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

int main(void) {
	int fd = open("sparse", O_CREAT | O_RDWR | O_TRUNC, 0644);
	struct stat st;
	RET("ftruncate.1GiB", ftruncate(fd, 1L << 30));
	fstat(fd, &st);
	SHOW("size.after.ftruncate", "%lld", (long long)st.st_size);
	RET("pwrite.4GiB", pwrite(fd, "x", 1, 4L << 30));
	RET("pwrite.8GiB", pwrite(fd, "y", 1, 8L << 30));
	fstat(fd, &st);
	SHOW("size.after.pwrite", "%lld", (long long)st.st_size);
	char c = '?';
	RET("pread.4GiB", pread(fd, &c, 1, 4L << 30));
	SHOW("byte.4GiB", "%c", c);
	c = '?';
	RET("pread.hole.6GiB", pread(fd, &c, 1, 6L << 30));
	SHOW("byte.hole.6GiB", "%d", c);
	RET("pread.past.end", pread(fd, &c, 1, (8L << 30) + 1));
	RET("ftruncate.back.to.0", ftruncate(fd, 0));
	RET("close", close(fd));
	RET("unlink", unlink("sparse"));

	/* 1 GiB of untouched memory as the source: a bounded kernel copies
	 * only what the socket buffer takes. */
	size_t mib = 1 << 20;
	char *src = mmap(NULL, 1024 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	static struct iovec iov[1024];
	for (int i = 0; i < 1024; i++)
		iov[i] = (struct iovec){src + i * mib, mib};
	int sv[2];
	RET("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	ssize_t n = writev(sv[0], iov, 1024);
	SHOW("writev.1024x1MiB.partial", "%d", n > 0 && (size_t)n < 1024 * mib);
	RET("writev.again.full", writev(sv[0], iov, 1024));
	RET("munmap", munmap(src, 1024 * mib));
	return 0;
}
