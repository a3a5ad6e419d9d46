/* A tmpfs remounted read-only (MS_REMOUNT | MS_RDONLY, as LTP's
 * needs_rofs does): every change is EROFS, reads and opens for reading
 * work, and it becomes writable again. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <utime.h>

static void show_mountinfo(const char *name) {
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		char target[256], opts[128], super[128];
		if (sscanf(line, "%*d %*d %*s %*s %255s %127s %*[^-]- %*s %*s %127s", target, opts, super) == 3 &&
		    strcmp(target, "/ro") == 0) {
			SHOW(name, "%.2s %.2s", opts, super);
		}
	}
	if (f)
		fclose(f);
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/ro", 0755);
	RET("mount", mount("tmpfs", "/ro", "tmpfs", 0, NULL));
	int fd = open("/ro/f", O_CREAT | O_RDWR, 0644);
	write(fd, "data", 4);
	close(fd);
	mkdir("/ro/d", 0755);
	RET("remount.ro", mount(NULL, "/ro", "tmpfs", MS_REMOUNT | MS_RDONLY, NULL));
	show_mountinfo("mountinfo.ro");
	RET("open.read", close(open("/ro/f", O_RDONLY)));
	RET("open.write", open("/ro/f", O_WRONLY));
	RET("open.create", open("/ro/new", O_CREAT | O_WRONLY, 0644));
	RET("open.create.existing.read", close(open("/ro/f", O_CREAT | O_RDONLY, 0644)));
	RET("creat.existing", creat("/ro/f", 0644));
	RET("mkdir", mkdir("/ro/d2", 0755));
	RET("mkdir.existing", mkdir("/ro/d", 0755));
	RET("mknod.fifo", mknod("/ro/p", S_IFIFO | 0644, 0));
	RET("symlink", symlink("f", "/ro/l"));
	RET("link", link("/ro/f", "/ro/f2"));
	RET("unlink", unlink("/ro/f"));
	RET("rmdir", rmdir("/ro/d"));
	RET("rename", rename("/ro/f", "/ro/g"));
	RET("chmod", chmod("/ro/f", 0600));
	RET("chown", chown("/ro/f", 1, 1));
	RET("utime", utime("/ro/f", NULL));
	RET("utimes.now", utimensat(AT_FDCWD, "/ro/f", NULL, 0));
	RET("truncate", truncate("/ro/f", 0));
	RET("access.write", access("/ro/f", W_OK));
	RET("access.read", access("/ro/f", R_OK));
	RET("setxattr", setxattr("/ro/f", "user.x", "1", 1, 0));
	char c[8];
	int r = open("/ro/f", O_RDONLY);
	RET("read", read(r, c, sizeof c));
	close(r);
	RET("bind.ro", mount("/ro/d", "/ro/d", NULL, MS_BIND | MS_RDONLY, NULL));
	RET("remount.rw", mount(NULL, "/ro", "tmpfs", MS_REMOUNT, NULL));
	show_mountinfo("mountinfo.rw");
	RET("mkdir.after.rw", mkdir("/ro/d2", 0755));
	RET("unlink.after.rw", unlink("/ro/f"));
	RET("umount", umount("/ro"));
	RET("mount.ro", mount("tmpfs", "/ro", "tmpfs", MS_RDONLY, NULL));
	RET("create.on.new.ro", open("/ro/x", O_CREAT | O_WRONLY, 0644));
	RET("umount.ro", umount("/ro"));
	return 0;
}
