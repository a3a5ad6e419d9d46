/* loopback_up brings lo up: Linux booted with an initramfs leaves it down.
 * tcp_listen and tcp_pair make TCP sockets over it. */
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static inline void loopback_up(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq r = {0};
	strcpy(r.ifr_name, "lo");
	ioctl(s, SIOCGIFFLAGS, &r);
	r.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &r);
	close(s);
}

/* tcp_listen returns a socket listening on a free port of 127.0.0.1, whose
 * address it puts in *a. */
static inline int tcp_listen(struct sockaddr_in *a) {
	int l = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t n = sizeof *a;
	*a = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(l, (struct sockaddr *)a, sizeof *a);
	listen(l, 4);
	getsockname(l, (struct sockaddr *)a, &n);
	return l;
}

/* tcp_pair connects two TCP sockets over 127.0.0.1: sv[0] the accepted
 * end, sv[1] the client's. */
static inline void tcp_pair(int sv[2]) {
	struct sockaddr_in a;
	int l = tcp_listen(&a);
	sv[1] = socket(AF_INET, SOCK_STREAM, 0);
	connect(sv[1], (struct sockaddr *)&a, sizeof a);
	sv[0] = accept(l, NULL, NULL);
	close(l);
}
