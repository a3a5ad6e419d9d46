/* Descriptors: lowest free number, bad descriptors, close-on-exec flag,
 * file positions of plain files. */
#include "../conform.h"
#include <fcntl.h>

int main(void) {
	RET("open.create", open("f", O_CREAT | O_RDWR | O_TRUNC, 0644));
	RET("write", write(3, "hello world", 11));
	RET("lseek.cur", lseek(3, 0, SEEK_CUR));
	RET("lseek.set", lseek(3, 6, SEEK_SET));
	char buf[16] = {0};
	RET("read", read(3, buf, sizeof buf));
	SHOW("read.data", "%s", buf);
	RET("lseek.end", lseek(3, -5, SEEK_END));
	RET("lseek.negative", lseek(3, -100, SEEK_SET));
	RET("lseek.whence", lseek(3, 0, 42));
	RET("open.second", open("f", O_RDONLY));
	RET("close.3", close(3));
	RET("open.reuses.lowest", open("f", O_RDONLY | O_CLOEXEC));
	RET("getfd.cloexec", fcntl(3, F_GETFD));
	RET("getfd.plain", fcntl(4, F_GETFD));
	RET("close.bad", close(99));
	RET("close.negative", close(-1));
	RET("read.bad", read(99, buf, 1));
	RET("write.readonly", write(4, "x", 1));
	RET("dupfd.min", fcntl(4, F_DUPFD, 100));
	RET("open.missing", open("missing", O_RDONLY));
	RET("open.excl", open("f", O_CREAT | O_EXCL | O_RDWR, 0644));
	RET("open.dir.write", open(".", O_RDWR));
	RET("open.notdir", open("f", O_RDONLY | O_DIRECTORY));
	return 0;
}
