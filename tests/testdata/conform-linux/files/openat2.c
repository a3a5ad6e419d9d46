/* openat2: the size of struct open_how and its tail, every argument
 * check (unknown flags, a mode without O_CREAT, resolve flags), and the
 * lookups the resolve flags confine: beneath a directory, in it as a
 * root, without symbolic links, magic links or mount crossings. qemu-user
 * answers ENOSYS, so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static int dfd = AT_FDCWD;

static long openat2_(int dir, const char *path, void *how, size_t size)
{
	return syscall(SYS_openat2, dir, path, how, size);
}

/* try opens path from dir with flags, mode and resolve and prints what it
 * opened: the first bytes of a file, "dir", "link" for an O_PATH of a
 * link, or the error. */
static void try(const char *name, int dir, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .mode = mode, .resolve = resolve};
	errno = 0;
	long fd = openat2_(dir, path, &how, sizeof how);
	if (fd < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	struct stat st;
	fstat(fd, &st);
	char buf[16] = {0};
	if (S_ISDIR(st.st_mode))
		SHOW(name, "%s", "dir");
	else if (S_ISLNK(st.st_mode))
		SHOW(name, "%s", "link");
	else if (flags & O_PATH)
		SHOW(name, "%s", "path");
	else if (read(fd, buf, sizeof buf - 1) >= 0)
		SHOW(name, "%s", buf);
	else
		SHOW(name, "opened, read %s", strerrorname_np(errno));
	close(fd);
}

static void put(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, data, strlen(data));
	close(fd);
}

int main(void)
{
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/o2", 0755);
	mkdir("/o2/d", 0755);
	mkdir("/o2/d/sub", 0755);
	mkdir("/o2/d/mnt", 0755);
	put("/o2/d/f", "in d");
	put("/o2/outside", "outside");
	put("/o2/d/sub/g", "in sub");
	symlink("sub", "/o2/d/rel");
	symlink("/o2/d/f", "/o2/d/abs");
	symlink("../outside", "/o2/d/up");
	symlink("f", "/o2/d/lnkf");
	symlink("sub/../../d/f", "/o2/d/deep");
	symlink("/f", "/o2/d/rootf");
	RET("mount.tmpfs", mount("tmpfs", "/o2/d/mnt", "tmpfs", 0, NULL));
	put("/o2/d/mnt/x", "in mnt");
	dfd = open("/o2/d", O_DIRECTORY | O_PATH);
	int mnt = open("/o2/d/mnt", O_DIRECTORY);
	int file = open("/o2/d/f", O_RDONLY);
	chdir("/o2");

	/* The structure's size and its tail. */
	struct {
		struct open_how how;
		uint64_t pad[512];
	} big = {{.flags = O_RDONLY}};
	RET("size.0", openat2_(dfd, "f", &big, 0));
	RET("size.23", openat2_(dfd, "f", &big, 23));
	RET("size.24", openat2_(dfd, "f", &big, 24) >= 0);
	RET("size.32.zero.tail", openat2_(dfd, "f", &big, 32) >= 0);
	RET("size.4096.zero.tail", openat2_(dfd, "f", &big, 4096) >= 0);
	RET("size.4097", openat2_(dfd, "f", &big, 4097));
	big.pad[3] = 1;
	RET("size.64.tail.set", openat2_(dfd, "f", &big, 64));
	RET("size.32.tail.set.later", openat2_(dfd, "f", &big, 32) >= 0);
	char *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(pages + 4096, 4096, PROT_NONE);
	struct open_how *edge = (struct open_how *)(pages + 4096 - sizeof *edge);
	edge->flags = O_RDONLY;
	RET("size.tail.unreadable", openat2_(dfd, "f", edge, sizeof *edge + 8));
	RET("size.fits.page.end", openat2_(dfd, "f", edge, sizeof *edge) >= 0);
	RET("how.bad", openat2_(dfd, "f", BAD, 24));
	RET("path.null", openat2_(dfd, NULL, &big.how, 24));

	/* Argument checks. */
	try("flags.unknown", dfd, "f", 1ULL << 40, 0, 0);
	try("flags.bit.30", dfd, "f", 1ULL << 30, 0, 0);
	try("flags.cloexec", dfd, "f", O_CLOEXEC, 0, 0);
	try("mode.without.creat", dfd, "f", O_RDONLY, 0644, 0);
	try("mode.bad", dfd, "f", O_CREAT, 010000, 0);
	try("mode.all.bits", dfd, "f", O_CREAT | O_RDWR, 07777, 0);
	try("resolve.unknown", dfd, "f", O_RDONLY, 0, 0x40);
	try("beneath.and.in.root", dfd, "f", O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT);
	try("directory.creat", dfd, "sub", O_DIRECTORY | O_CREAT, 0644, 0);
	try("path.rdwr", dfd, "f", O_PATH | O_RDWR, 0, 0);
	try("path.cloexec.nofollow", dfd, "lnkf", O_PATH | O_CLOEXEC | O_NOFOLLOW, 0, 0);
	try("tmpfile.rdonly", dfd, "sub", O_TMPFILE, 0644, 0);
	try("cached", dfd, "f", O_RDONLY, 0, RESOLVE_CACHED);
	try("cached.creat", dfd, "f", O_RDONLY | O_CREAT, 0644, RESOLVE_CACHED);
	try("cached.trunc", dfd, "f", O_RDWR | O_TRUNC, 0, RESOLVE_CACHED);
	try("empty", dfd, "", O_RDONLY, 0, 0);
	try("dfd.bad", 99, "f", O_RDONLY, 0, 0);
	try("dfd.bad.absolute", 99, "/o2/d/f", O_RDONLY, 0, 0);
	try("dfd.file", file, "f", O_RDONLY, 0, 0);
	try("plain", dfd, "f", O_RDONLY, 0, 0);
	try("plain.cwd", AT_FDCWD, "d/lnkf", O_RDONLY, 0, 0);
	try("creat.through.link", dfd, "lnkf", O_RDONLY | O_CREAT, 0400, 0);
	symlink("/proc/version", "/o2/d/version");
	try("creat.through.link.proc", dfd, "version", O_RDONLY | O_CREAT, 0400, 0);
	try("proc.version", AT_FDCWD, "/proc/version", O_RDONLY, 0, 0);

	/* RESOLVE_BENEATH: nothing may leave the directory. */
	try("beneath.file", dfd, "f", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.dotdot.inside", dfd, "sub/../f", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.dotdot.out", dfd, "../d/f", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.dot", dfd, ".", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.dotdot", dfd, "..", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.absolute", dfd, "/o2/d/f", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.absolute", dfd, "abs", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.relative", dfd, "rel/g", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.up", dfd, "up", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.plain", dfd, "lnkf", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.deep", dfd, "deep", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.link.nofollow", dfd, "abs", O_PATH | O_NOFOLLOW, 0, RESOLVE_BENEATH);
	try("beneath.mount", dfd, "mnt/x", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.create", dfd, "sub/new", O_RDWR | O_CREAT, 0644, RESOLVE_BENEATH);
	try("beneath.create.out", dfd, "../new", O_RDWR | O_CREAT, 0644, RESOLVE_BENEATH);
	try("beneath.cwd", AT_FDCWD, "d/f", O_RDONLY, 0, RESOLVE_BENEATH);
	try("beneath.cwd.out", AT_FDCWD, "../etc", O_RDONLY, 0, RESOLVE_BENEATH);
	int self = open("/proc/self", O_DIRECTORY | O_PATH);
	try("beneath.magic", self, "exe", O_PATH, 0, RESOLVE_BENEATH);
	try("beneath.magic.nofollow", self, "exe", O_PATH | O_NOFOLLOW, 0, RESOLVE_BENEATH);

	/* RESOLVE_IN_ROOT: the directory is "/". */
	try("in.root.absolute", dfd, "/f", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.dotdot", dfd, "../../f", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.link.absolute", dfd, "abs", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.link.rootf", dfd, "rootf", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.link.up", dfd, "up", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.link.deep", dfd, "deep", O_RDONLY, 0, RESOLVE_IN_ROOT);
	try("in.root.create", dfd, "/made", O_RDWR | O_CREAT, 0644, RESOLVE_IN_ROOT);
	RET("in.root.create.where", access("/o2/d/made", F_OK));
	try("in.root.magic", self, "exe", O_PATH, 0, RESOLVE_IN_ROOT);
	try("in.root.proc.version", AT_FDCWD, "/proc/version", O_RDONLY, 0, RESOLVE_IN_ROOT);

	/* RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS. */
	try("no.symlinks.file", dfd, "f", O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
	try("no.symlinks.last", dfd, "lnkf", O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
	try("no.symlinks.middle", dfd, "rel/g", O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
	try("no.symlinks.nofollow.path", dfd, "lnkf", O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS);
	try("no.symlinks.nofollow", dfd, "lnkf", O_RDONLY | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS);
	try("no.symlinks.magic", AT_FDCWD, "/proc/self/exe", O_PATH, 0, RESOLVE_NO_SYMLINKS);
	char fdpath[64];
	snprintf(fdpath, sizeof fdpath, "/proc/%d/fd/%d", getpid(), file);
	try("no.magiclinks.exe", AT_FDCWD, "/proc/self/exe", O_PATH, 0, RESOLVE_NO_MAGICLINKS);
	try("no.magiclinks.fd", AT_FDCWD, fdpath, O_RDONLY, 0, RESOLVE_NO_MAGICLINKS);
	try("no.magiclinks.fd.nofollow", AT_FDCWD, fdpath, O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_MAGICLINKS);
	try("no.magiclinks.plain.link", dfd, "lnkf", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS);
	try("magic.fd", AT_FDCWD, fdpath, O_RDONLY, 0, 0);

	/* RESOLVE_NO_XDEV. */
	try("no.xdev.same", dfd, "sub/g", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.into.mount", dfd, "mnt/x", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.in.mount", mnt, "x", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.out.of.mount", mnt, "../f", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.absolute", mnt, "/o2/d/f", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.proc", AT_FDCWD, "/proc/version", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.link", dfd, "abs", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.link.from.root", AT_FDCWD, "/o2/d/abs", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.link.in.root", dfd, "abs", O_RDONLY, 0, RESOLVE_NO_XDEV | RESOLVE_IN_ROOT);
	try("no.xdev.link.relative", dfd, "lnkf", O_RDONLY, 0, RESOLVE_NO_XDEV);
	try("no.xdev.magic", AT_FDCWD, fdpath, O_RDONLY, 0, RESOLVE_NO_XDEV);

	/* A magic link's object ends the walk: an O_PATH descriptor of a
	 * magic link, reached through its own, is that link (a file system
	 * cannot be mounted on it). */
	int link_fd = open(fdpath, O_PATH | O_NOFOLLOW);
	char linkpath[64];
	snprintf(linkpath, sizeof linkpath, "/proc/%d/fd/%d", getpid(), link_fd);
	try("magic.to.magic", AT_FDCWD, linkpath, O_PATH, 0, 0);
	RET("mount.on.magic.link", mount("/o2/d/f", linkpath, NULL, MS_BIND, NULL));
	return 0;
}
