/* Named pipes: mkfifo makes a FIFO node; a non-blocking writer without a
 * reader gets ENXIO; a non-blocking reader opens at once and reads end of
 * file; a blocking reader waits for the writer a child opens, and reads
 * what it wrote; O_RDWR opens without waiting; the data goes when the
 * last end closes. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

int main(void) {
	umask(022);
	RET("mkfifo", mkfifo("fifo-a", 0666));
	RET("mkfifo again", mkfifo("fifo-a", 0666));
	struct stat st;
	RET("stat", stat("fifo-a", &st));
	SHOW("is fifo", "%d mode %04o", S_ISFIFO(st.st_mode), st.st_mode & 07777);
	RET("open(O_WRONLY|O_NONBLOCK) without reader", open("fifo-a", O_WRONLY | O_NONBLOCK));
	int r = open("fifo-a", O_RDONLY | O_NONBLOCK);
	SHOW("open(O_RDONLY|O_NONBLOCK)", "%d", r >= 0);
	char buf[64];
	RET("read without writer", read(r, buf, sizeof buf));
	int w = open("fifo-a", O_WRONLY | O_NONBLOCK);
	SHOW("open(O_WRONLY|O_NONBLOCK) with reader", "%d", w >= 0);
	RET("write", write(w, "abc", 3));
	RET("read", read(r, buf, sizeof buf));
	close(w);
	close(r);

	pid_t pid = fork();
	if (pid == 0) {
		usleep(100000);
		int cw = open("fifo-a", O_WRONLY);
		if (write(cw, "from child", 10) != 10)
			_exit(1);
		_exit(0);
	}
	r = open("fifo-a", O_RDONLY);
	SHOW("blocking open for reading returns", "%d", r >= 0);
	ssize_t n;
	size_t got = 0;
	while ((n = read(r, buf + got, sizeof buf - got)) > 0)
		got += n;
	SHOW("read from child", "%.*s", (int)got, buf);
	int status;
	waitpid(pid, &status, 0);
	SHOW("child", "exited=%d code=%d", WIFEXITED(status), WEXITSTATUS(status));
	close(r);

	int rw = open("fifo-a", O_RDWR);
	SHOW("open(O_RDWR)", "%d", rw >= 0);
	RET("write rw", write(rw, "kept?", 5));
	close(rw);
	r = open("fifo-a", O_RDONLY | O_NONBLOCK);
	RET("read after last close", read(r, buf, sizeof buf));
	close(r);
	RET("unlink", unlink("fifo-a"));
	RET("mknod(S_IFREG)", mknod("fifo-r", S_IFREG | 0600, 0));
	RET("stat regular", stat("fifo-r", &st));
	SHOW("is regular", "%d mode %04o size %ld", S_ISREG(st.st_mode), st.st_mode & 07777, (long)st.st_size);
	RET("mknod(S_IFDIR)", mknod("fifo-d", S_IFDIR | 0755, 0));
	return 0;
}
