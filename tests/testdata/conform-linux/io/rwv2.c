/* preadv2 and pwritev2: at an offset, at the file position (offset -1,
 * which moves it), RWF_NOWAIT on an empty pipe, flags not known, and the
 * errors in the order Linux checks them. qemu-user (7.2) has no preadv2,
 * so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <sys/syscall.h>
#include <sys/uio.h>

static long rv2(int fd, struct iovec *v, int n, long off, int flags) { return syscall(SYS_preadv2, fd, v, n, off, 0, flags); }
static long wv2(int fd, struct iovec *v, int n, long off, int flags) { return syscall(SYS_pwritev2, fd, v, n, off, 0, flags); }

int main(void) {
	int fd = open("rwv2_file", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char a[8] = "abcdefg", b[8] = "1234567", in[16] = {0};
	struct iovec w[2] = {{a, 3}, {b, 4}};
	RET("pwritev2.at", wv2(fd, w, 2, 2, 0));
	SHOW("pwritev2.at.pos", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	RET("pwritev2.cur", wv2(fd, w, 1, -1, RWF_DSYNC | RWF_HIPRI));
	SHOW("pwritev2.cur.pos", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	struct iovec r[2] = {{in, 4}, {in + 8, 8}};
	RET("preadv2.at", rv2(fd, r, 2, 0, 0));
	SHOW("preadv2.at.data", "%.4s|%.8s", in, in + 8);
	lseek(fd, 5, SEEK_SET);
	memset(in, 0, sizeof in);
	RET("preadv2.cur", rv2(fd, r, 1, -1, RWF_SYNC));
	SHOW("preadv2.cur.data", "%.4s", in);
	SHOW("preadv2.cur.pos", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	RET("preadv2.nowait.file", rv2(fd, r, 1, 0, RWF_NOWAIT));
	RET("preadv2.badflag", rv2(fd, r, 1, 0, 0x1000));
	RET("preadv2.neg", rv2(fd, r, 1, -2, 0));
	RET("preadv2.badfd", rv2(99, BAD, 1, 0, 0x1000));
	RET("preadv2.badfd.neg", rv2(99, r, 1, -5, 0));
	RET("preadv2.fault", rv2(fd, BAD, 1, 0, 0));
	RET("preadv2.fault.badflag", rv2(fd, BAD, 1, 0, 0x1000));
	RET("pwritev2.badflag", wv2(fd, w, 1, 0, 0x1000));
	int p[2];
	pipe(p);
	RET("preadv2.pipe.nowait", rv2(p[0], r, 1, -1, RWF_NOWAIT));
	RET("preadv2.pipe.at", rv2(p[0], r, 1, 0, 0));
	RET("pwritev2.pipe.cur", wv2(p[1], w, 2, -1, 0));
	RET("preadv2.pipe.cur", rv2(p[0], r, 2, -1, RWF_NOWAIT));
	SHOW("preadv2.pipe.data", "%.4s|%.3s", in, in + 8);
	close(fd);
	unlink("rwv2_file");
	return 0;
}
