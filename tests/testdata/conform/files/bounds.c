/* Offsets, lengths and counts from issue 7's hostile programs: each gets
 * the errno Linux gives, and the kernel goes on. */
#define _FILE_OFFSET_BITS 64
#include "../conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/sendfile.h>
#include <sys/uio.h>

int main(void) {
	char buf[64];
	int fd = open("b", O_CREAT | O_RDWR | O_TRUNC, 0644);
	RET("write", write(fd, "0123456789", 10));
	RET("pread.negative", pread(fd, buf, 8, -1));
	RET("pwrite.negative", pwrite(fd, "x", 1, -5));
	RET("pwrite.near.2^63", pwrite(fd, "xy", 2, INT64_MAX - 1));
	RET("pread.near.2^63", pread(fd, buf, 8, INT64_MAX - 1));
	RET("ftruncate.negative", ftruncate(fd, -1));
	RET("fcntl.dupfd.negative", fcntl(0, F_DUPFD, -1));
	lseek(fd, 0, SEEK_SET);
	/* qemu-user checks a whole buffer before Linux sees the call, so counts
	 * larger than the buffer are not compared here. */
	struct iovec neg[1] = {{buf, (size_t)-1}};
	RET("readv.negative.length", readv(fd, neg, 1));
	static struct iovec many[1025];
	for (int i = 0; i < 1025; i++)
		many[i] = (struct iovec){buf, 1};
	volatile int count = 1025;
	RET("readv.too.many", readv(fd, many, count));
	off_t off = 0;
	RET("sendfile.same.file.huge", sendfile(fd, fd, &off, SIZE_MAX));
	off = -1;
	RET("sendfile.negative.offset", sendfile(1, fd, &off, 1));
	RET("sendfile.badptr", sendfile(1, fd, (off_t *)BAD, 1));
	RET("read.badptr", read(fd, BAD, 1));
	RET("write.badptr", write(fd, BAD, 1));
	RET("close", close(fd));
	return 0;
}
