/* fsync and fdatasync: a regular file and a directory sync; a pipe, a
 * FIFO, a socket and a character device have nothing to sync (EINVAL);
 * an O_PATH or closed descriptor is EBADF (LTP's fsync03). */
#include "../conform.h"
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

int main(void) {
	int f = open("fsync.tmp", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(f, "x", 1);
	RET("file", fsync(f));
	RET("file.fdatasync", fdatasync(f));
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	RET("dir", fsync(dir));
	int p[2];
	pipe(p);
	RET("pipe.write", fsync(p[1]));
	RET("pipe.read.fdatasync", fdatasync(p[0]));
	unlink("fsync.fifo");
	mkfifo("fsync.fifo", 0644);
	int fr = open("fsync.fifo", O_RDONLY | O_NONBLOCK);
	RET("fifo", fsync(fr));
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	RET("socket", fsync(s));
	int null = open("/dev/null", O_WRONLY);
	RET("devnull", fsync(null));
	int path = open("fsync.tmp", O_PATH);
	RET("O_PATH", fsync(path));
	close(f);
	RET("closed", fsync(f));
	RET("negative", fsync(-1));
	unlink("fsync.tmp");
	unlink("fsync.fifo");
	return 0;
}
