/* A receiver whose buffer is made as small as it goes (SO_RCVBUF 0, which
 * Linux raises to SOCK_MIN_RCVBUF, 2304 bytes), set before connect and
 * after accept, and a writer in another process that sends 128 KiB in one
 * blocking write while the receiver waits a second before it reads: the
 * window closes to nothing and must open again as the reader takes the
 * bytes, until all of them have arrived, as on Linux. */
#include "../../conform/conform.h"
#include "../loopback.h"
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define TOTAL (128 << 10)

static char buf[TOTAL];

/* receive sends TOTAL bytes from a child process to a receiver whose
 * SO_RCVBUF is 0, set before it connects or after, and returns how many
 * arrived before the stream ended or stalled for 3 s. */
static long receive(int before_connect) {
	struct sockaddr_in a;
	int l = tcp_listen(&a), zero = 0;
	int rx = socket(AF_INET, SOCK_STREAM, 0);
	if (before_connect)
		setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &zero, sizeof zero);
	connect(rx, (struct sockaddr *)&a, sizeof a);
	int tx = accept(l, NULL, NULL);
	close(l);
	if (!before_connect)
		setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &zero, sizeof zero);
	pid_t child = fork();
	if (child == 0) {
		alarm(60);
		_exit(write(tx, buf, TOTAL) == TOTAL ? 0 : 1);
	}
	close(tx);
	sleep(1);
	struct pollfd p = {rx, POLLIN, 0};
	long got = 0, r = 1;
	while (got < TOTAL && r > 0 && poll(&p, 1, 3000) == 1)
		if ((r = read(rx, buf, 1000)) > 0)
			got += r;
	int status;
	waitpid(child, &status, 0);
	SHOW("writer.exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	close(rx);
	return got;
}

int main(void) {
	loopback_up();
	SHOW("rcvbuf.before.connect.got", "%ld", receive(1));
	SHOW("rcvbuf.after.accept.got", "%ld", receive(0));
	return 0;
}
