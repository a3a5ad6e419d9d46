/* What an O_PATH descriptor refuses (EBADF, Linux's fdget), O_CREAT on a
 * directory (EISDIR), O_NOATIME by another user (EPERM), fsync,
 * sync_file_range and readahead by kind of file, and close_range. */
#define _GNU_SOURCE
#include "../conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>

int main(void) {
	int fd = open("op.f", O_CREAT | O_RDWR, 0644);
	write(fd, "data", 4);
	close(fd);
	mkdir("op.d", 0755);
	symlink("op.d", "op.ld");

	int p = open("op.f", O_PATH);
	char buf[64];
	RET("opath.fchmod", fchmod(p, 0600));
	RET("opath.fchown", fchown(p, 0, 0));
	RET("opath.ioctl", ioctl(p, FIONREAD, &fd));
	RET("opath.mmap", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, p, 0) == MAP_FAILED ? -1 : 0);
	RET("opath.fsync", fsync(p));
	RET("opath.fgetxattr", fgetxattr(p, "user.x", buf, sizeof buf));
	RET("opath.futimens", futimens(p, NULL));
	RET("opath.fstat", fstat(p, &(struct stat){0}));
	int dp = open("op.d", O_PATH);
	RET("opath.getdents64", syscall(SYS_getdents64, dp, buf, sizeof buf));
	RET("opath.fchownat.empty", fchownat(p, "", -1, -1, AT_EMPTY_PATH));

	RET("creat.dir", open("op.d", O_RDONLY | O_CREAT, 0644));
	RET("creat.dir.link", open("op.ld", O_RDONLY | O_CREAT, 0644));
	RET("creat.dir.excl", open("op.d", O_RDONLY | O_CREAT | O_EXCL, 0644));

	chmod("op.f", 0666);
	fflush(stdout);
	if (fork() == 0) {
		setuid(1000);
		RET("noatime.other.user", open("op.f", O_RDONLY | O_NOATIME));
		RET("plain.other.user", close(open("op.f", O_RDONLY)));
		_exit(0);
	}
	wait(NULL);
	RET("noatime.owner", close(open("op.f", O_RDONLY | O_NOATIME)));

	int pp[2];
	pipe(pp);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	fd = open("op.f", O_RDWR);
	int wo = open("op.f", O_WRONLY);
	int d = open("op.d", O_RDONLY | O_DIRECTORY);
	RET("fsync.file", fsync(fd));
	RET("fsync.dir", fsync(d));
	RET("fsync.pipe", fsync(pp[0]));
	RET("fdatasync.socket", fdatasync(s));
	RET("fsync.badfd", fsync(99));
	RET("sync_file_range.file", sync_file_range(fd, 0, 1, SYNC_FILE_RANGE_WRITE));
	RET("sync_file_range.pipe", sync_file_range(pp[1], 0, 1, SYNC_FILE_RANGE_WRITE));
	RET("sync_file_range.badflags", sync_file_range(fd, 0, 1, 8));
	RET("sync_file_range.negative", sync_file_range(fd, -1, 1, 0));
	RET("sync_file_range.negative.len", sync_file_range(fd, 0, -1, 0));
	RET("sync_file_range.badfd", sync_file_range(99, 0, 1, 0));
	RET("readahead.file", readahead(fd, 0, 4096));
	RET("readahead.pipe", readahead(pp[0], 0, 4096));
	RET("readahead.writeonly", readahead(wo, 0, 4096));
	RET("readahead.dir", readahead(d, 0, 4096));

	/* close_range */
	int a = dup(fd), b = dup(fd), c = dup(fd);
	RET("close_range.badflags", syscall(SYS_close_range, a, c, 1));
	RET("close_range.reversed", syscall(SYS_close_range, c, a, 0));
	RET("close_range.cloexec", syscall(SYS_close_range, a, b, 4));
	RET("cloexec.a", fcntl(a, F_GETFD));
	RET("cloexec.c", fcntl(c, F_GETFD));
	RET("close_range", syscall(SYS_close_range, a, c, 0));
	RET("closed.a", fcntl(a, F_GETFD));
	RET("closed.c", fcntl(c, F_GETFD));
	RET("kept.fd", fcntl(fd, F_GETFD));
	RET("close_range.none.open", syscall(SYS_close_range, 500, 600, 0));
	RET("close_range.unshare", syscall(SYS_close_range, 700, ~0U, 2));
	return 0;
}
