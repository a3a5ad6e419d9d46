/* fallocate and posix_fadvise on tmpfs (Linux's initramfs root is one),
 * and epoll_pwait2's timeout. Linux is the oracle: the host's scratch
 * directory is another file system, whose fallocate modes differ. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/falloc.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

static void show(const char *name, int fd) {
	struct stat st;
	fstat(fd, &st);
	SHOW(name, "size %ld blocks %ld", (long)st.st_size, (long)st.st_blocks);
}

int main(void) {
	int fd = open("falloc-file", O_CREAT | O_RDWR | O_TRUNC, 0644);
	show("new", fd);
	RET("alloc", fallocate(fd, 0, 0, 3 * 4096 + 10));
	show("alloc", fd);
	RET("alloc.keep", fallocate(fd, FALLOC_FL_KEEP_SIZE, 8 * 4096, 4096));
	show("alloc.keep", fd);
	char buf[3 * 4096 + 10];
	memset(buf, 'x', sizeof buf);
	pwrite(fd, buf, sizeof buf, 0);
	RET("punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100, 2 * 4096));
	show("punch", fd);
	char got[3 * 4096 + 10];
	pread(fd, got, sizeof got, 0);
	SHOW("punch.bytes", "%c %d %d %c %c", got[99], got[100], got[100 + 2 * 4096 - 1], got[100 + 2 * 4096],
	     got[sizeof got - 1]);
	RET("punch.past", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100 * 4096, 4096));
	show("punch.past", fd);
	RET("punch.nokeep", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
	RET("zero", fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096));
	RET("collapse", fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096));
	RET("collapse.keep", fallocate(fd, FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096));
	RET("insert", fallocate(fd, FALLOC_FL_INSERT_RANGE, 0, 4096));
	RET("punch.zero", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096));
	RET("badmode", fallocate(fd, 0x100, 0, 4096));
	RET("neg.offset", fallocate(fd, 0, -1, 4096));
	RET("zero.len", fallocate(fd, 0, 0, 0));
	RET("neg.len", fallocate(fd, 0, 0, -1));
	RET("huge", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0x7fffffffffffffffL, 4096));
	RET("badfd", fallocate(999, 0, 0, 4096));
	int ro = open("falloc-file", O_RDONLY);
	RET("readonly", fallocate(ro, 0, 0, 4096));
	int fds[2];
	pipe(fds);
	RET("pipe", fallocate(fds[1], 0, 0, 4096));
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	RET("dir", fallocate(dir, 0, 0, 4096));
	int null = open("/dev/null", O_WRONLY);
	if (null < 0) {
		mknod("null-dev", S_IFCHR | 0666, makedev(1, 3));
		null = open("null-dev", O_WRONLY);
	}
	RET("chardev", fallocate(null, 0, 0, 4096));

	/* a shared mapping sees a punched hole */
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	m[200] = 'y';
	RET("punch.mapped", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
	SHOW("mapped.after", "%d", m[200]);
	munmap(m, 4096);

	struct rlimit rl = {4096, 4096};
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &rl);
	RET("fsize", fallocate(fd, 0, 0, 20 * 4096));
	RET("fsize.keep", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 20 * 4096));
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &rl);

	RET("fadvise.normal", posix_fadvise(fd, 0, 4096, POSIX_FADV_NORMAL) ? -1 : 0);
	RET("fadvise.dontneed", syscall(SYS_fadvise64, fd, 0, 0, POSIX_FADV_DONTNEED));
	RET("fadvise.noreuse", syscall(SYS_fadvise64, fd, 0, 0, POSIX_FADV_NOREUSE));
	RET("fadvise.bad", syscall(SYS_fadvise64, fd, 0, 0, 6));
	RET("fadvise.neglen", syscall(SYS_fadvise64, fd, 0, -1, 0));
	RET("fadvise.negoff", syscall(SYS_fadvise64, fd, -1, 0, 0));
	RET("fadvise.badfd", syscall(SYS_fadvise64, 999, 0, 0, 0));
	RET("fadvise.pipe", syscall(SYS_fadvise64, fds[0], 0, 0, 0));
	RET("fadvise.dir", syscall(SYS_fadvise64, dir, 0, 0, 0));
	RET("fadvise.chardev", syscall(SYS_fadvise64, null, 0, 0, 0));

	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
	struct timespec ts = {0, 20000000};
	RET("pwait2.timeout", syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8));
	ts.tv_nsec = 0;
	RET("pwait2.zero", syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8));
	ts.tv_nsec = -1;
	RET("pwait2.badts", syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8));
	RET("pwait2.faultts", syscall(SYS_epoll_pwait2, ep, &out, 1, BAD, NULL, 8));
	write(fds[1], "a", 1);
	RET("pwait2.null", syscall(SYS_epoll_pwait2, ep, &out, 1, NULL, NULL, 8));
	RET("pwait2.badmax", syscall(SYS_epoll_pwait2, ep, &out, 0, NULL, NULL, 8));
	RET("pwait2.badfd", syscall(SYS_epoll_pwait2, 999, &out, 1, NULL, NULL, 8));
	return 0;
}
