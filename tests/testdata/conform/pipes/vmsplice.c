/* vmsplice: user buffers into a pipe's write end and out of its read end,
 * its errors (not a pipe, bad flags, too many or bad iovecs) and
 * SPLICE_F_NONBLOCK on a full pipe. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/uio.h>

int main(void) {
	int p[2];
	pipe2(p, O_NONBLOCK);
	char a[] = "hello ", b[] = "vmsplice";
	struct iovec in[] = {{a, 6}, {b, 8}};
	RET("to pipe", vmsplice(p[1], in, 2, 0));
	char x[4] = {0}, y[32] = {0};
	struct iovec out[] = {{x, 3}, {y, sizeof y}};
	RET("from pipe", vmsplice(p[0], out, 2, 0));
	SHOW("data", "%s|%s", x, y);
	RET("from empty pipe nonblock", vmsplice(p[0], out, 2, SPLICE_F_NONBLOCK));
	RET("none", vmsplice(p[1], in, 0, 0));
	RET("bad flags", vmsplice(p[1], in, 2, 0x100));
	RET("too many", vmsplice(p[1], in, 1025, 0));
	RET("bad iovec array", vmsplice(p[1], BAD, 2, 0));
	int f = open("vmsplice.file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	RET("not a pipe", vmsplice(f, in, 2, 0));
	RET("bad fd", vmsplice(1000, in, 2, 0));
	char fill[4096];
	memset(fill, 'f', sizeof fill);
	long total = 0, n;
	while ((n = write(p[1], fill, sizeof fill)) > 0)
		total += n;
	SHOW("filled", "%ld", total);
	RET("to full pipe nonblock", vmsplice(p[1], in, 2, SPLICE_F_NONBLOCK));

	/* More than the pipe holds, blocking: what fits, as Linux's
	 * vmsplice_to_pipe, not all of it (this thread is the only reader). */
	int q[2];
	pipe(q);
	static char big[1 << 17];
	struct iovec whole = {big, sizeof big};
	long put = vmsplice(q[1], &whole, 1, 0);
	SHOW("more than fits", "%s", put > 0 && put < (long)sizeof big ? "part" : "not part");
	return 0;
}
