/* listenLoopback: a TCP socket listening on 127.0.0.1 at a port the kernel
 * picks; *a is its address, for connect. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int listenLoopback(struct sockaddr_in *a, int backlog) {
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	*a = (struct sockaddr_in){0};
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(ls, (struct sockaddr *)a, sizeof *a);
	listen(ls, backlog);
	socklen_t len = sizeof *a;
	getsockname(ls, (struct sockaddr *)a, &len);
	return ls;
}
