/* name_to_handle_at and open_by_handle_at: the size asked for (EOVERFLOW),
 * a handle that opens the same file (its contents, from another
 * directory), a directory's and a symlink's (ELOOP to open), the mount id
 * of /proc's mountinfo, /proc's EOPNOTSUPP, a removed file's ESTALE, and
 * EPERM without CAP_DAC_READ_SEARCH. qemu-riscv64 passes the calls to the
 * host's file systems, so Linux in QEMU is the oracle. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

static struct file_handle *handle_of(const char *name, const char *path, int flags) {
	struct file_handle probe = {0}, *h;
	int mount_id;
	RET(name, name_to_handle_at(AT_FDCWD, path, &probe, &mount_id, flags));
	h = calloc(1, sizeof *h + probe.handle_bytes);
	h->handle_bytes = probe.handle_bytes;
	int r = name_to_handle_at(AT_FDCWD, path, h, &mount_id, flags);
	SHOW(name, "ok %d bytes %u type %d", r == 0, h->handle_bytes, h->handle_type);
	return h;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/handles", 0755);
	mount("tmpfs", "/handles", "tmpfs", 0, NULL);
	chdir("/handles");
	int fd = open("file", O_CREAT | O_RDWR, 0644);
	write(fd, "contents", 8);
	close(fd);
	mkdir("dir", 0755);
	symlink("file", "link");

	struct file_handle *file = handle_of("file", "file", 0);
	struct file_handle *dir = handle_of("dir", "dir", 0);
	struct file_handle *link = handle_of("link", "link", 0);
	struct file_handle *followed = handle_of("link.followed", "link", AT_SYMLINK_FOLLOW);
	SHOW("followed.same", "%d", memcmp(file->f_handle, followed->f_handle, file->handle_bytes) == 0);
	SHOW("link.differs", "%d", memcmp(file->f_handle, link->f_handle, file->handle_bytes) != 0);

	chdir("dir");
	int opened = open_by_handle_at(AT_FDCWD, file, O_RDONLY);
	char buf[16] = {0};
	read(opened, buf, sizeof buf - 1);
	SHOW("open.file", "%d %s", opened >= 0, buf);
	close(opened);
	int mfd = open("/handles", O_RDONLY | O_DIRECTORY);
	opened = open_by_handle_at(mfd, dir, O_RDONLY | O_DIRECTORY);
	struct stat st;
	fstat(opened, &st);
	SHOW("open.dir", "%d %d", opened >= 0, S_ISDIR(st.st_mode));
	RET("open.dir.rdwr", open_by_handle_at(mfd, dir, O_RDWR));
	RET("open.link", open_by_handle_at(mfd, link, O_RDONLY));
	opened = open_by_handle_at(mfd, link, O_PATH);
	SHOW("open.link.path", "%d", opened >= 0);
	int root = open("/", O_RDONLY);
	RET("open.other-fs", open_by_handle_at(root, file, O_RDONLY));
	int pm = open("/proc", O_RDONLY);
	RET("open.proc-anchor", open_by_handle_at(pm, file, O_RDONLY));

	struct file_handle probe = {0};
	int mount_id;
	RET("proc", name_to_handle_at(AT_FDCWD, "/proc/self/status", &probe, &mount_id, 0));
	probe.handle_bytes = 129;
	RET("too-big", name_to_handle_at(AT_FDCWD, "/handles/file", &probe, &mount_id, 0));
	RET("bad-flags", name_to_handle_at(AT_FDCWD, "/handles/file", &probe, &mount_id, 0x1000));
	RET("missing", name_to_handle_at(AT_FDCWD, "/handles/none", &probe, &mount_id, 0));
	struct file_handle zero = {0};
	RET("open.zero-size", open_by_handle_at(mfd, &zero, O_RDONLY));

	if (fork() == 0) {
		setuid(65534);
		RET("open.unprivileged", open_by_handle_at(mfd, file, O_RDONLY));
		_exit(0);
	}
	wait(NULL);
	unlink("/handles/file");
	RET("open.removed", open_by_handle_at(mfd, file, O_RDONLY));
	return 0;
}
