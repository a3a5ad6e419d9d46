/* Inode flags on tmpfs (chattr): FS_IOC_GETFLAGS and SETFLAGS, the
 * fsxattr ioctls, who may set them (the owner; immutable and append-only
 * only with CAP_LINUX_IMMUTABLE), the flags tmpfs refuses, statx's
 * attributes, and what immutable and append-only files and directories
 * refuse: writing opens, truncation, fallocate, F_SETFL, chmod, chown,
 * utimensat, extended attributes, links, renames and removal. procfs and
 * pipes have no flags (ENOTTY). Linux 6.12's tmpfs is the oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

static void put(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, "data\n", 5);
	close(fd);
}

/* setflags opens path read-only and sets its flags. */
static void setflags(const char *name, const char *path, int flags)
{
	int fd = open(path, O_RDONLY);
	RET(name, ioctl(fd, FS_IOC_SETFLAGS, &flags));
	close(fd);
}

static void getflags(const char *name, const char *path)
{
	int fd = open(path, O_RDONLY), flags = -1;
	errno = 0;
	long r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (r < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%#x", flags);
	close(fd);
}

static void show_attrs(const char *name, const char *path, int flags)
{
	struct statx sx;
	memset(&sx, 0, sizeof sx);
	errno = 0;
	if (statx(AT_FDCWD, path, flags, STATX_BASIC_STATS, &sx) < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "attributes %#llx mask %#llx", (unsigned long long)sx.stx_attributes,
		     (unsigned long long)sx.stx_attributes_mask);
}

/* refusals tries what a flagged file refuses, each on a fresh try. */
static void refusals(const char *prefix, const char *path, const char *dir)
{
	char name[64], other[128];
#define TRY(what, call)                                         \
	do {                                                    \
		snprintf(name, sizeof name, "%s.%s", prefix, what); \
		RET(name, call);                                \
	} while (0)
	int fd;
	TRY("open.rdonly", fd = open(path, O_RDONLY));
	if (fd >= 0)
		close(fd);
	TRY("open.wronly", fd = open(path, O_WRONLY));
	if (fd >= 0)
		close(fd);
	TRY("open.append", fd = open(path, O_WRONLY | O_APPEND));
	if (fd >= 0) {
		TRY("append.write", write(fd, "more\n", 5));
		TRY("append.ftruncate", ftruncate(fd, 1));
		TRY("append.fallocate", fallocate(fd, 0, 0, 8192));
		TRY("append.fallocate.keep", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 8192));
		TRY("append.punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1));
		TRY("append.setfl.clear", fcntl(fd, F_SETFL, 0));
		void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		snprintf(name, sizeof name, "%s.append.mmap.shared", prefix);
		SHOW(name, "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		snprintf(name, sizeof name, "%s.append.mmap.private", prefix);
		SHOW(name, "%s", m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
		close(fd);
	}
	TRY("open.trunc", fd = open(path, O_WRONLY | O_APPEND | O_TRUNC));
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDONLY);
	TRY("rdonly.setfl.append", fcntl(fd, F_SETFL, O_APPEND));
	close(fd);
	TRY("truncate", truncate(path, 1));
	TRY("access.w", access(path, W_OK));
	TRY("chmod", chmod(path, 0600));
	TRY("chown", chown(path, 0, 0));
	TRY("chown.none", chown(path, -1, -1));
	TRY("utimens.now", utimensat(AT_FDCWD, path, NULL, 0));
	struct timespec ts[2] = {{1, 0}, {2, 0}};
	TRY("utimens.given", utimensat(AT_FDCWD, path, ts, 0));
	TRY("setxattr", setxattr(path, "user.x", "1", 1, 0));
	TRY("setxattr.trusted", setxattr(path, "trusted.x", "1", 1, 0));
	TRY("removexattr", removexattr(path, "user.x"));
	snprintf(other, sizeof other, "%s/link", dir);
	TRY("link", link(path, other));
	snprintf(other, sizeof other, "%s/renamed", dir);
	TRY("rename", rename(path, other));
	TRY("unlink", unlink(path));
	struct stat st;
	stat(path, &st);
	snprintf(name, sizeof name, "%s.size", prefix);
	SHOW(name, "%ld", (long)st.st_size);
#undef TRY
}

static void drop_immutable_cap(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	syscall(SYS_capget, &hdr, data);
	data[0].effective &= ~(1u << CAP_LINUX_IMMUTABLE);
	RET("child.capset", syscall(SYS_capset, &hdr, data));
	setflags("child.set.immutable", "/mnt/plain", FS_IMMUTABLE_FL);
	setflags("child.set.nodump", "/mnt/plain", FS_NODUMP_FL);
	setflags("child.clear.append", "/mnt/append", 0);
	setflags("child.keep.append", "/mnt/append", FS_APPEND_FL | FS_NOATIME_FL);
	getflags("child.append.after", "/mnt/append");
	setflags("child.restore.append", "/mnt/append", FS_APPEND_FL);
}

static void not_owner(void)
{
	RET("child.setuid", setuid(1000));
	setflags("child.nodump.notowner", "/mnt/plain", FS_NODUMP_FL);
	getflags("child.get.notowner", "/mnt/plain");
	RET("child.open.w.immutable", open("/mnt/immutable", O_WRONLY));
	RET("child.access.w.immutable", access("/mnt/immutable", W_OK));
}

int main(void)
{
	mkdir("/mnt", 0755);
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	RET("mount", mount("tmpfs", "/mnt", "tmpfs", 0, NULL));
	chmod("/mnt", 01777);
	umask(022);
	put("/mnt/plain");
	chmod("/mnt/plain", 0666);
	put("/mnt/immutable");
	put("/mnt/append");
	put("/mnt/mover");
	put("/mnt/moved");
	mkdir("/mnt/adir", 0755);
	put("/mnt/adir/inside");
	mkdir("/mnt/idir", 0755);
	put("/mnt/idir/inside");

	getflags("get.plain", "/mnt/plain");
	getflags("get.dir", "/mnt");
	show_attrs("statx.plain", "/mnt/plain", 0);
	show_attrs("statx.mountroot", "/mnt", 0);
	show_attrs("statx.root", "/", 0);
	show_attrs("statx.proc", "/proc/self/status", 0);
	show_attrs("statx.procroot", "/proc", 0);

	setflags("set.nodump", "/mnt/plain", FS_NODUMP_FL);
	setflags("set.noatime", "/mnt/plain", FS_NODUMP_FL | FS_NOATIME_FL);
	getflags("get.plain.after", "/mnt/plain");
	show_attrs("statx.nodump", "/mnt/plain", 0);
	setflags("set.sync", "/mnt/plain", FS_SYNC_FL);
	setflags("set.compr", "/mnt/plain", FS_COMPR_FL);
	setflags("set.extents", "/mnt/plain", FS_EXTENT_FL);
	getflags("get.plain.refused", "/mnt/plain");
	setflags("set.none", "/mnt/plain", 0);

	int fd = open("/mnt/plain", O_RDONLY);
	struct fsxattr fa;
	memset(&fa, 0, sizeof fa);
	RET("fsgetxattr", ioctl(fd, FS_IOC_FSGETXATTR, &fa));
	SHOW("fsgetxattr.flags", "%#x extsize %u nextents %u projid %u", fa.fsx_xflags, fa.fsx_extsize,
	     fa.fsx_nextents, fa.fsx_projid);
	fa.fsx_xflags = FS_XFLAG_NODUMP | FS_XFLAG_NOATIME;
	RET("fssetxattr", ioctl(fd, FS_IOC_FSSETXATTR, &fa));
	getflags("get.after.fssetxattr", "/mnt/plain");
	fa.fsx_xflags = FS_XFLAG_NODUMP | FS_XFLAG_REALTIME;
	RET("fssetxattr.realtime", ioctl(fd, FS_IOC_FSSETXATTR, &fa));
	fa.fsx_xflags = 0;
	fa.fsx_projid = 7;
	RET("fssetxattr.projid", ioctl(fd, FS_IOC_FSSETXATTR, &fa));
	fa.fsx_projid = 0;
	RET("fssetxattr.clear", ioctl(fd, FS_IOC_FSSETXATTR, &fa));
	RET("getflags.bad", ioctl(fd, FS_IOC_GETFLAGS, BAD));
	RET("setflags.bad", ioctl(fd, FS_IOC_SETFLAGS, BAD));
	close(fd);

	int p[2];
	pipe(p);
	int flags = 0;
	RET("pipe.getflags", ioctl(p[0], FS_IOC_GETFLAGS, &flags));
	RET("pipe.setflags", ioctl(p[0], FS_IOC_SETFLAGS, &flags));
	fd = open("/proc/self/status", O_RDONLY);
	RET("proc.getflags", ioctl(fd, FS_IOC_GETFLAGS, &flags));
	close(fd);

	int prior = open("/mnt/immutable", O_WRONLY);
	setflags("set.immutable", "/mnt/immutable", FS_IMMUTABLE_FL);
	RET("prior.write", write(prior, "x", 1));
	RET("prior.ftruncate", ftruncate(prior, 2));
	RET("prior.fallocate", fallocate(prior, 0, 0, 100));
	RET("prior.fchmod", fchmod(prior, 0600));
	close(prior);
	setflags("set.append", "/mnt/append", FS_APPEND_FL);
	show_attrs("statx.immutable", "/mnt/immutable", 0);
	show_attrs("statx.append", "/mnt/append", 0);
	refusals("immutable", "/mnt/immutable", "/mnt");
	refusals("append", "/mnt/append", "/mnt");

	setflags("set.adir", "/mnt/adir", FS_APPEND_FL);
	RET("adir.create", fd = open("/mnt/adir/new", O_WRONLY | O_CREAT, 0644));
	close(fd); /* a file open for writing would keep the remount below read-write (EBUSY) */
	RET("adir.unlink", unlink("/mnt/adir/inside"));
	RET("adir.rename.out", rename("/mnt/adir/inside", "/mnt/out"));
	RET("adir.rename.in", rename("/mnt/mover", "/mnt/adir/mover"));
	RET("adir.rename.back", rename("/mnt/adir/mover", "/mnt/mover"));
	RET("adir.mkdir", mkdir("/mnt/adir/sub", 0755));
	RET("adir.rmdir", rmdir("/mnt/adir/sub"));
	setflags("set.idir", "/mnt/idir", FS_IMMUTABLE_FL);
	RET("idir.create", open("/mnt/idir/new", O_WRONLY | O_CREAT, 0644));
	RET("idir.unlink", unlink("/mnt/idir/inside"));
	RET("idir.inside.write", fd = open("/mnt/idir/inside", O_WRONLY));
	close(fd);
	RET("idir.rename.in", rename("/mnt/moved", "/mnt/idir/moved"));
	RET("idir.rmdir", rmdir("/mnt/idir"));
	RET("idir.rename", rename("/mnt/idir", "/mnt/idir2"));

	SHOW("child.cap", "%d", run_child(drop_immutable_cap));
	SHOW("child.uid", "%d", run_child(not_owner));

	RET("remount.ro", mount(NULL, "/mnt", NULL, MS_REMOUNT | MS_RDONLY, NULL));
	setflags("ro.set", "/mnt/plain", FS_NODUMP_FL);
	getflags("ro.get", "/mnt/immutable");
	RET("remount.rw", mount(NULL, "/mnt", NULL, MS_REMOUNT, NULL));

	setflags("clear.immutable", "/mnt/immutable", 0);
	RET("immutable.cleared.write", fd = open("/mnt/immutable", O_WRONLY | O_TRUNC));
	close(fd);
	setflags("clear.append", "/mnt/append", 0);
	RET("append.cleared.unlink", unlink("/mnt/append"));
	setflags("clear.idir", "/mnt/idir", 0);
	RET("idir.cleared.unlink", unlink("/mnt/idir/inside"));

	/* A file with no name, opened anew through /proc/self/fd. */
	int mfd = syscall(SYS_memfd_create, "flags", 0);
	int append = FS_APPEND_FL;
	RET("memfd.setflags", ioctl(mfd, FS_IOC_SETFLAGS, &append));
	char fdpath[64];
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", mfd);
	RET("memfd.reopen.write", open(fdpath, O_WRONLY));
	RET("memfd.reopen.trunc", open(fdpath, O_RDONLY | O_TRUNC));
	RET("memfd.reopen.append", open(fdpath, O_WRONLY | O_APPEND) >= 0);
	return 0;
}
