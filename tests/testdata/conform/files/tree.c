/* The file tree: stat and statx fields Linux defines for any file system,
 * utimensat, links, symlinks, rename rules, directories, *at calls
 * relative to a directory descriptor, chdir. */
#include "../conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

static void show_stat(const char *name, const char *path, int follow) {
	struct stat st;
	int r = follow ? stat(path, &st) : lstat(path, &st);
	if (r < 0) {
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
		return;
	}
	printf("%s: type %o perm %o nlink %ld size %ld\n", name, st.st_mode & S_IFMT, st.st_mode & 07777,
	       (long)st.st_nlink, S_ISDIR(st.st_mode) ? 0L : (long)st.st_size);
	fflush(stdout);
}

int main(void) {
	umask(022);
	int fd = open("a", O_CREAT | O_WRONLY | O_TRUNC, 0666);
	RET("write", write(fd, "hello", 5));
	close(fd);
	show_stat("stat.a", "a", 1);
	RET("link", link("a", "b"));
	show_stat("stat.a.linked", "a", 1);
	RET("link.exists", link("a", "b"));
	RET("link.missing", link("nope", "c"));
	RET("mkdir", mkdir("d", 0750));
	show_stat("stat.d", "d", 1);
	RET("link.dir", link("d", "d2"));
	RET("mkdir.exists", mkdir("d", 0755));
	RET("mkdir.missing.parent", mkdir("x/y", 0755));
	RET("symlink", symlink("a", "s"));
	show_stat("lstat.s", "s", 0);
	show_stat("stat.s", "s", 1);
	char buf[64] = {0};
	RET("readlink", readlink("s", buf, sizeof buf));
	SHOW("readlink.data", "%s", buf);
	RET("readlink.short", readlink("s", buf, 0));
	RET("readlink.notlink", readlink("a", buf, sizeof buf));
	RET("symlink.empty", symlink("", "e"));
	RET("symlink.dangling", symlink("nowhere", "dangling"));
	show_stat("stat.dangling", "dangling", 1);
	RET("symlink.loop1", symlink("loop2", "loop1"));
	RET("symlink.loop2", symlink("loop1", "loop2"));
	show_stat("stat.loop", "loop1", 1);

	/* utimensat */
	struct timespec ts[2] = {{1000000000, 123456789}, {1200000000, 5}};
	RET("utimensat", utimensat(AT_FDCWD, "a", ts, 0));
	struct stat st;
	stat("a", &st);
	SHOW("times", "%ld.%09ld %ld.%09ld", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec,
	     st.st_mtim.tv_nsec);
	struct timespec omit[2] = {{0, UTIME_OMIT}, {77, 0}};
	RET("utimensat.omit", utimensat(AT_FDCWD, "b", omit, 0));
	stat("a", &st);
	SHOW("times.omit", "%ld %ld", (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
	struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
	RET("utimensat.badnsec", utimensat(AT_FDCWD, "a", bad, 0));
	RET("utimensat.missing", utimensat(AT_FDCWD, "nope", ts, 0));
	fd = open("a", O_RDONLY);
	RET("futimens", futimens(fd, ts));
	fstat(fd, &st);
	SHOW("futimens.mtime", "%ld", (long)st.st_mtim.tv_sec);

	/* statx */
	struct statx sx;
	RET("statx", statx(AT_FDCWD, "a", 0, STATX_BASIC_STATS, &sx));
	SHOW("statx.fields", "mask-basic %d mode %o nlink %u size %llu mtime %lld", (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS,
	     sx.stx_mode, sx.stx_nlink, (unsigned long long)sx.stx_size, (long long)sx.stx_mtime.tv_sec);
	RET("statx.emptypath", statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx));
	SHOW("statx.emptypath.size", "%llu", (unsigned long long)sx.stx_size);
	RET("statx.nofollow", statx(AT_FDCWD, "s", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
	SHOW("statx.nofollow.type", "%o", sx.stx_mode & S_IFMT);
	RET("statx.badflags", statx(AT_FDCWD, "a", 0x80000000, STATX_BASIC_STATS, &sx));
	RET("statx.reserved", statx(AT_FDCWD, "a", 0, 0x80000000u, &sx));
	RET("statx.badbuf", statx(AT_FDCWD, "a", 0, STATX_BASIC_STATS, (struct statx *)BAD));
	close(fd);

	/* *at calls relative to a directory descriptor */
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	RET("openat.dirfd.create", openat(dfd, "inner", O_CREAT | O_WRONLY, 0600));
	show_stat("stat.inner", "d/inner", 1);
	RET("fstatat.dirfd", fstatat(dfd, "inner", &st, 0));
	RET("mkdirat.dirfd", mkdirat(dfd, "sub", 0755));
	RET("unlinkat.dirfd.dir.without.flag", unlinkat(dfd, "sub", 0));
	RET("unlinkat.bad.flags", unlinkat(dfd, "sub", 9999));
	RET("unlinkat.dirfd", unlinkat(dfd, "sub", AT_REMOVEDIR));
	int ffd = open("a", O_RDONLY);
	RET("openat.notdir", openat(ffd, "x", O_RDONLY));
	RET("openat.badfd", openat(77, "x", O_RDONLY));
	RET("openat.absolute.ignores.fd", openat(77, "/", O_RDONLY | O_DIRECTORY) >= 0);
	close(ffd);

	/* rename */
	RET("mkdir.d.sub", mkdir("d/sub", 0755));
	RET("rename.into.itself", rename("d", "d/sub/x"));
	RET("rename.dir.onto.file", rename("d/sub", "a"));
	RET("rename.file.onto.dir", rename("a", "d/sub"));
	RET("mkdir.full", mkdir("full", 0755));
	RET("create.in.full", close(open("full/f", O_CREAT | O_WRONLY, 0644)));
	RET("rename.onto.nonempty", rename("d/sub", "full"));
	RET("rename.onto.emptydir", rename("full", "d/sub"));
	show_stat("stat.moved", "d/sub/f", 1);
	RET("rename.same.link", rename("a", "b"));
	show_stat("stat.a.after.same", "a", 1);
	RET("rename.replace", rename("b", "c"));
	RET("rename.replace.again", rename("c", "a"));
	show_stat("stat.a.replaced", "a", 1);
	RET("rename.missing", rename("nope", "x"));
	RET("rename.dot", rename(".", "x"));

	/* directories */
	RET("rmdir.nonempty", rmdir("d"));
	RET("rmdir.file", rmdir("a"));
	RET("unlink.dir", unlink("d"));
	RET("chdir", chdir("d"));
	char cwd[256];
	SHOW("getcwd.tail", "%s", strrchr(getcwd(cwd, sizeof cwd), '/'));
	RET("chdir.file", chdir("inner"));
	RET("chdir.missing", chdir("nope"));
	RET("fchdir.dot.dot", chdir(".."));
	RET("fchdir", fchdir(dfd));
	SHOW("getcwd.fchdir.tail", "%s", strrchr(getcwd(cwd, sizeof cwd), '/'));
	RET("getcwd.small", getcwd(cwd, 2) == NULL ? -1 : 0);
	RET("chdir.back", chdir(".."));
	DIR *dir = opendir("d");
	int entries = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL)
		entries++;
	closedir(dir);
	SHOW("readdir.count", "%d", entries);
	struct statfs sfs;
	RET("statfs", statfs(".", &sfs));
	RET("statfs.missing", statfs("nope", &sfs));
	RET("access.exists", access("a", F_OK));
	RET("access.missing", access("nope", F_OK));
	return 0;
}
