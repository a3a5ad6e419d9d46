/* Opening a pipe through /dev/fd/N or /proc/self/fd/N (bash's process
 * substitution does) opens the same pipe anew, either side, without
 * waiting; stat through the path sees the pipe. */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(void) {
	int p[2];
	RET("pipe", pipe(p));
	RET("write", write(p[1], "abc", 3));
	char path[64], buf[16];
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	int r = open(path, O_RDONLY);
	SHOW("open(/dev/fd/R)", "%d", r >= 0);
	RET("read through it", read(r, buf, sizeof buf));
	struct stat a, b;
	RET("stat(/dev/fd/R)", stat(path, &a));
	RET("fstat(R)", fstat(p[0], &b));
	SHOW("same pipe", "fifo=%d same-ino=%d", S_ISFIFO(a.st_mode), a.st_ino == b.st_ino);
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
	int w = open(path, O_WRONLY);
	SHOW("open(/proc/self/fd/W)", "%d", w >= 0);
	RET("write through it", write(w, "xyz", 3));
	RET("read original", read(p[0], buf, sizeof buf));
	RET("close W", close(p[1]));
	RET("fcntl nonblock", fcntl(p[0], F_SETFL, O_NONBLOCK));
	RET("read while the reopened writer lives", read(p[0], buf, sizeof buf));
	RET("close reopened W", close(w));
	RET("read after every writer closed", read(p[0], buf, sizeof buf));
	snprintf(path, sizeof path, "/dev/fd/%d", 99);
	RET("open(/dev/fd/99)", open(path, O_RDONLY));
	return 0;
}
