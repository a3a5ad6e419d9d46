/* random(4): the entropy count RNDGETENTCNT and
 * /proc/sys/kernel/random/entropy_avail agree (a seeded generator's full
 * pool), the privileged ioctls' checks, an unknown request; the pool's
 * settings (LTP's ioctl07). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/random.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/dev", 0755);
	mknod("/dev/urandom", S_IFCHR | 0666, makedev(1, 9));
	mknod("/dev/random", S_IFCHR | 0666, makedev(1, 8));
	int fd = open("/dev/urandom", O_RDONLY);
	int cnt = -1;
	RET("getentcnt", ioctl(fd, RNDGETENTCNT, &cnt));
	SHOW("count", "%d", cnt);
	show_file("/proc/sys/kernel/random/entropy_avail", "/proc/sys/kernel/random/entropy_avail");
	show_file("/proc/sys/kernel/random/poolsize", "/proc/sys/kernel/random/poolsize");
	show_file("/proc/sys/kernel/random/urandom_min_reseed_secs", "/proc/sys/kernel/random/urandom_min_reseed_secs");
	show_file("/proc/sys/kernel/random/write_wakeup_threshold", "/proc/sys/kernel/random/write_wakeup_threshold");
	int random = open("/dev/random", O_RDONLY);
	RET("random.getentcnt", ioctl(random, RNDGETENTCNT, &cnt));
	int add = 8;
	RET("addtoentcnt", ioctl(fd, RNDADDTOENTCNT, &add));
	add = -1;
	RET("addtoentcnt.negative", ioctl(fd, RNDADDTOENTCNT, &add));
	struct {
		int count, size;
		char buf[8];
	} ent = {16, 8, "abcdefg"};
	RET("addentropy", ioctl(fd, RNDADDENTROPY, &ent));
	RET("zapentcnt", ioctl(fd, RNDZAPENTCNT));
	RET("clearpool", ioctl(fd, RNDCLEARPOOL));
	RET("reseed", ioctl(fd, RNDRESEEDCRNG));
	RET("unknown", ioctl(fd, _IO('R', 0x20)));
	RET("getentcnt.bad", ioctl(fd, RNDGETENTCNT, (int *)8));
	RET("tcgets", ioctl(fd, TCGETS, &cnt));
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		add = 8;
		RET("nobody.getentcnt", ioctl(fd, RNDGETENTCNT, &cnt));
		RET("nobody.addtoentcnt", ioctl(fd, RNDADDTOENTCNT, &add));
		RET("nobody.reseed", ioctl(fd, RNDRESEEDCRNG));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	show_file("/proc/sys/kernel/random/entropy_avail", "/proc/sys/kernel/random/entropy_avail");
	return 0;
}
