/* A tmpfs remounted read-only, as LTP's needs_rofs tests make one
 * (mount(NULL, mnt, "tmpfs", MS_REMOUNT | MS_RDONLY)): every change of
 * data, metadata or entries is EROFS, before any permission check, while
 * an entry that exists still answers EEXIST and special files can still
 * be written; reads work; /proc/mounts says ro; a remount read-write
 * undoes it; a tmpfs mounted MS_RDONLY from the start is read-only too.
 * Linux is the oracle: qemu-riscv64 would mount on the host. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>

/* show_access prints the access field of /proc/mounts for mount point dir. */
static void show_access(const char *name, const char *dir) {
	char buf[8192], want[64];
	int fd = open("/proc/mounts", O_RDONLY), n = 0, r;
	while (fd >= 0 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	snprintf(want, sizeof want, " %s tmpfs ", dir);
	char *line = strstr(buf, want);
	SHOW(name, "%.2s", line ? line + strlen(want) : "??");
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/mnt", 0755);
	mkdir("/mnt/ro", 0755);
	RET("mount", mount("tmpfs", "/mnt/ro", "tmpfs", 0, NULL));
	int fd = open("/mnt/ro/file", O_RDWR | O_CREAT, 0644);
	write(fd, "data", 4);
	close(fd);
	mkdir("/mnt/ro/dir", 0755);
	mkdir("/mnt/ro/full", 0755);
	close(open("/mnt/ro/full/f", O_WRONLY | O_CREAT, 0644));
	symlink("file", "/mnt/ro/link");
	mkfifo("/mnt/ro/fifo", 0666);
	fd = open("/mnt/ro/full/f", O_WRONLY);
	RET("remount ro with a writer", mount(NULL, "/mnt/ro", "tmpfs", MS_REMOUNT | MS_RDONLY, NULL));
	close(fd);
	fd = open("/mnt/ro/dir", O_RDONLY);
	RET("remount ro with a reader", mount(NULL, "/mnt/ro", "tmpfs", MS_REMOUNT | MS_RDONLY, NULL));
	RET("remount rw", mount(NULL, "/mnt/ro", "tmpfs", MS_REMOUNT, NULL));
	close(fd);
	RET("remount ro", mount(NULL, "/mnt/ro", "tmpfs", MS_REMOUNT | MS_RDONLY, NULL));
	show_access("mounts after remount ro", "/mnt/ro");

	RET("open rdonly", (fd = open("/mnt/ro/file", O_RDONLY)) >= 0 ? 0 : -1);
	char buf[8] = {0};
	RET("read", read(fd, buf, sizeof buf));
	close(fd);
	RET("open wronly", open("/mnt/ro/file", O_WRONLY));
	RET("open rdwr", open("/mnt/ro/file", O_RDWR));
	RET("open rdonly trunc", open("/mnt/ro/file", O_RDONLY | O_TRUNC));
	RET("open creat new", open("/mnt/ro/new", O_WRONLY | O_CREAT, 0644));
	RET("open creat existing rdonly", (fd = open("/mnt/ro/file", O_RDONLY | O_CREAT, 0644)) >= 0 ? 0 : -1);
	close(fd);
	RET("open creat excl existing", open("/mnt/ro/file", O_RDONLY | O_CREAT | O_EXCL, 0644));
	RET("open dir", (fd = open("/mnt/ro/dir", O_RDONLY | O_DIRECTORY)) >= 0 ? 0 : -1);
	close(fd);
	RET("creat", creat("/mnt/ro/new", 0644));
	RET("mkdir", mkdir("/mnt/ro/newdir", 0755));
	RET("mkdir existing", mkdir("/mnt/ro/dir", 0755));
	RET("rmdir", rmdir("/mnt/ro/dir"));
	RET("rmdir not empty", rmdir("/mnt/ro/full"));
	RET("unlink", unlink("/mnt/ro/file"));
	RET("unlink missing", unlink("/mnt/ro/missing"));
	RET("rename", rename("/mnt/ro/file", "/mnt/ro/moved"));
	RET("rename missing", rename("/mnt/ro/missing", "/mnt/ro/moved"));
	RET("rmdir missing", rmdir("/mnt/ro/missing"));
	RET("link", link("/mnt/ro/file", "/mnt/ro/hard"));
	RET("symlink", symlink("file", "/mnt/ro/link2"));
	RET("mknod fifo", mknod("/mnt/ro/fifo2", S_IFIFO | 0644, 0));
	RET("chmod", chmod("/mnt/ro/file", 0600));
	RET("chmod dir", chmod("/mnt/ro/dir", 0700));
	RET("chown", chown("/mnt/ro/file", 1, 1));
	RET("chown nothing", chown("/mnt/ro/file", -1, -1));
	RET("lchown link", lchown("/mnt/ro/link", 1, 1));
	RET("utime", utime("/mnt/ro/file", NULL));
	struct timeval tv[2] = {{1, 0}, {2, 0}};
	RET("utimes", utimes("/mnt/ro/file", tv));
	RET("truncate", truncate("/mnt/ro/file", 0));
	RET("truncate dir", truncate("/mnt/ro/dir", 0));
	RET("setxattr", setxattr("/mnt/ro/file", "user.a", "v", 1, 0));
	RET("removexattr", removexattr("/mnt/ro/file", "user.a"));
	RET("getxattr", getxattr("/mnt/ro/file", "user.a", buf, sizeof buf));
	RET("access W_OK", access("/mnt/ro/file", W_OK));
	RET("access W_OK dir", access("/mnt/ro/dir", W_OK));
	RET("access R_OK", access("/mnt/ro/file", R_OK));
	RET("access W_OK fifo", access("/mnt/ro/fifo", W_OK));
	RET("faccessat W_OK link nofollow", faccessat(AT_FDCWD, "/mnt/ro/link", W_OK, AT_SYMLINK_NOFOLLOW));
	fd = open("/mnt/ro/file", O_RDONLY);
	RET("fchmod", fchmod(fd, 0600));
	RET("fchown", fchown(fd, 1, 1));
	RET("futimens", futimens(fd, NULL));
	RET("ftruncate rdonly fd", ftruncate(fd, 0));
	close(fd);

	RET("remount rw", mount(NULL, "/mnt/ro", "tmpfs", MS_REMOUNT, NULL));
	show_access("mounts after remount rw", "/mnt/ro");
	RET("open wronly again", (fd = open("/mnt/ro/file", O_WRONLY)) >= 0 ? 0 : -1);
	close(fd);
	RET("mkdir again", mkdir("/mnt/ro/newdir", 0755));
	RET("umount", umount("/mnt/ro"));

	mkdir("/mnt/fresh", 0755);
	RET("mount rdonly", mount("tmpfs", "/mnt/fresh", "tmpfs", MS_RDONLY, NULL));
	show_access("mounts fresh", "/mnt/fresh");
	RET("fresh mkdir", mkdir("/mnt/fresh/d", 0755));
	RET("fresh open creat", open("/mnt/fresh/f", O_WRONLY | O_CREAT, 0644));
	RET("fresh umount", umount("/mnt/fresh"));
	return 0;
}
