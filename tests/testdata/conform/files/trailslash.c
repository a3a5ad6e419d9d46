/* A path that ends in a slash names a directory: a final symbolic link is
 * followed (also by lstat and AT_SYMLINK_NOFOLLOW), and anything but a
 * directory is ENOTDIR; open with O_CREAT is EISDIR. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>

static const char *kind(struct stat *st)
{
	return S_ISDIR(st->st_mode) ? "dir" : S_ISLNK(st->st_mode) ? "link" : S_ISREG(st->st_mode) ? "file" : "other";
}

#define STAT(name, call, st)                                                   \
	do {                                                                   \
		errno = 0;                                                     \
		if ((call) == 0)                                               \
			SHOW(name, "%s", kind(st));                            \
		else                                                           \
			SHOW(name, "-1 %s", strerrorname_np(errno));           \
	} while (0)

int main(void)
{
	struct stat st;
	mkdir("ts.d", 0755);
	int fd = open("ts.f", O_CREAT | O_WRONLY, 0644);
	write(fd, "data", 4);
	close(fd);
	symlink("ts.d", "ts.ld");
	symlink("ts.f", "ts.lf");
	symlink("ts.none", "ts.dangling");

	STAT("stat link", stat("ts.ld", &st), &st);
	STAT("lstat link", lstat("ts.ld", &st), &st);
	STAT("stat link/", stat("ts.ld/", &st), &st);
	STAT("lstat link/", lstat("ts.ld/", &st), &st);
	STAT("lstat link//", lstat("ts.ld//", &st), &st);
	STAT("fstatat link/ nofollow", fstatat(AT_FDCWD, "ts.ld/", &st, AT_SYMLINK_NOFOLLOW), &st);
	STAT("stat dir/", stat("ts.d/", &st), &st);
	STAT("stat file/", stat("ts.f/", &st), &st);
	STAT("lstat file link/", lstat("ts.lf/", &st), &st);
	STAT("lstat dangling/", lstat("ts.dangling/", &st), &st);
	STAT("stat missing/", stat("ts.none/", &st), &st);
	struct statx sx;
	RET("statx link/ nofollow", statx(AT_FDCWD, "ts.ld/", AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx) == 0 ? (long)S_ISDIR(sx.stx_mode) : -1L);
	RET("statx file/", statx(AT_FDCWD, "ts.f/", 0, STATX_TYPE, &sx));
	RET("access file/", access("ts.f/", F_OK));
	RET("access link/", access("ts.ld/", F_OK));

	RET("open file/", open("ts.f/", O_RDONLY));
	RET("open file/ O_WRONLY|O_TRUNC", open("ts.f/", O_WRONLY | O_TRUNC));
	RET("file kept its data", (stat("ts.f", &st), (long)st.st_size));
	RET("open file link/", open("ts.lf/", O_RDONLY));
	RET("open dir/", close(open("ts.d/", O_RDONLY)));
	RET("open link/", close(open("ts.ld/", O_RDONLY)));
	RET("open link/ O_NOFOLLOW", close(open("ts.ld/", O_RDONLY | O_NOFOLLOW)));
	RET("open dir/ O_WRONLY", open("ts.d/", O_WRONLY));
	RET("open new/ O_CREAT", open("ts.new/", O_CREAT | O_WRONLY, 0644));
	RET("new/ not made", access("ts.new", F_OK));
	RET("open file/ O_CREAT", open("ts.f/", O_CREAT | O_WRONLY, 0644));
	RET("open dir/ O_CREAT", open("ts.d/", O_CREAT | O_RDONLY, 0644));
	RET("open missing/x/ O_CREAT", open("ts.none/x/", O_CREAT | O_WRONLY, 0644));
	return 0;
}
