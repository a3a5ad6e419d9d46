/* loopback_up brings lo up: Linux booted with an initramfs leaves it down. */
#include <net/if.h>
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
