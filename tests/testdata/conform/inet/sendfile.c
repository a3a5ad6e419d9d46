/* sendfile from a file to a TCP socket over the loopback: counts past the
 * end of the file, offsets at and beyond it, the offset pointer and the
 * file position, a large file in several calls, and the bytes the peer
 * reads (a checksum). */
#include "../conform.h"
#include "listen.h"
#include <fcntl.h>
#include <sys/sendfile.h>

/* connected makes a TCP connection over 127.0.0.1: *w writes, *r reads. */
static void connected(int *w, int *r) {
	struct sockaddr_in a;
	int ls = listenLoopback(&a, 1);
	*w = socket(AF_INET, SOCK_STREAM, 0);
	connect(*w, (struct sockaddr *)&a, sizeof a);
	*r = accept(ls, NULL, NULL);
	close(ls);
}

/* hash is of every byte the peer has read. */
static long hash;

/* drain reads n bytes from r into hash; 0, or -1 when the stream ends. */
static int drain(int r, long n) {
	static unsigned char buf[65536];
	while (n > 0) {
		ssize_t got = read(r, buf, n < (long)sizeof buf ? n : (long)sizeof buf);
		if (got <= 0)
			return -1;
		for (ssize_t i = 0; i < got; i++)
			hash = (hash * 31 + buf[i]) % 1000000007;
		n -= got;
	}
	return 0;
}

int main(void) {
	enum { size = 300000 };
	static unsigned char data[size];
	for (int i = 0; i < size; i++)
		data[i] = (unsigned char)(i * 7 + i / 251);
	int fd = open("f", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(fd, data, size);
	int w, r;
	connected(&w, &r);

	off_t off = size - 10;
	RET("sendfile.past.end", sendfile(w, fd, &off, 100));
	SHOW("offset after", "%ld", (long)off);
	RET("peer reads them", drain(r, 10));
	SHOW("hash", "%ld", hash);
	RET("sendfile.at.end", sendfile(w, fd, &off, 100));
	off = size + 5;
	RET("sendfile.beyond.end", sendfile(w, fd, &off, 100));
	SHOW("offset beyond", "%ld", (long)off);

	/* The whole file from the file position, in as many calls as it takes,
	 * the peer reading what each sent. */
	lseek(fd, 0, SEEK_SET);
	long sent = 0;
	while (sent < size) {
		ssize_t n = sendfile(w, fd, NULL, size - sent);
		if (n <= 0 || drain(r, n) < 0)
			break;
		sent += n;
	}
	SHOW("sent whole file", "%ld", sent);
	SHOW("file position", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	SHOW("hash", "%ld", hash);
	close(w);
	char c;
	RET("peer sees end", read(r, &c, 1));
	return 0;
}
