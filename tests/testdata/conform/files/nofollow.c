/* O_NOFOLLOW refuses a final symbolic link (ELOOP), one met on the way is
 * followed; O_PATH opens a location: no reads or writes (EBADF), but
 * fstat, fchdir, fcntl and dup work, and with O_NOFOLLOW it is the link
 * itself. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	struct stat st;
	char buf[8];
	mkdir("nf.d", 0755);
	int fd = open("nf.d/f", O_CREAT | O_WRONLY, 0644);
	write(fd, "data", 4);
	close(fd);
	symlink("f", "nf.d/lf");
	symlink("nf.d", "nf.ld");
	symlink("none", "nf.d/dangling");

	RET("O_NOFOLLOW final link", open("nf.d/lf", O_RDONLY | O_NOFOLLOW));
	RET("O_NOFOLLOW|O_CREAT final link", open("nf.d/lf", O_WRONLY | O_CREAT | O_NOFOLLOW, 0644));
	RET("O_NOFOLLOW|O_CREAT dangling", open("nf.d/dangling", O_WRONLY | O_CREAT | O_NOFOLLOW, 0644));
	RET("O_NOFOLLOW|O_CREAT|O_EXCL link", open("nf.d/lf", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644));
	RET("O_NOFOLLOW|O_TRUNC final link", open("nf.d/lf", O_WRONLY | O_TRUNC | O_NOFOLLOW));
	RET("file kept its data", (stat("nf.d/f", &st), (long)st.st_size));
	RET("O_NOFOLLOW link on the way", close(open("nf.ld/f", O_RDONLY | O_NOFOLLOW)));
	RET("O_NOFOLLOW dir link", open("nf.ld", O_RDONLY | O_NOFOLLOW | O_DIRECTORY));

	int p = open("nf.d/f", O_PATH);
	SHOW("O_PATH open", "%s", p >= 0 ? "ok" : strerrorname_np(errno));
	RET("O_PATH read", read(p, buf, sizeof buf));
	RET("O_PATH write", write(p, "x", 1));
	RET("O_PATH pread", pread(p, buf, sizeof buf, 0));
	RET("O_PATH fstat", fstat(p, &st) == 0 ? (long)st.st_size : -1L);
	RET("O_PATH F_GETFL has O_PATH", (fcntl(p, F_GETFL) & O_PATH) != 0);
	RET("O_PATH dup", close(dup(p)));
	RET("O_PATH|O_RDWR read", (p = open("nf.d/f", O_PATH | O_RDWR), read(p, buf, 1)));
	RET("O_PATH|O_RDWR write", write(p, "x", 1));
	RET("O_PATH|O_CREAT missing", open("nf.d/new", O_PATH | O_CREAT, 0644));
	RET("O_PATH|O_TRUNC", close(open("nf.d/f", O_PATH | O_TRUNC | O_WRONLY)));
	RET("file kept its data again", (stat("nf.d/f", &st), (long)st.st_size));

	int l = open("nf.d/lf", O_PATH | O_NOFOLLOW);
	SHOW("O_PATH|O_NOFOLLOW link", "%s", l >= 0 ? "ok" : strerrorname_np(errno));
	RET("its fstat is a link", fstat(l, &st) == 0 ? (long)S_ISLNK(st.st_mode) : -1L);
	RET("its read", read(l, buf, 1));

	chmod("nf.d/f", 0);
	RET("O_PATH without permission", close(open("nf.d/f", O_PATH)));
	int d = open("nf.d", O_PATH | O_DIRECTORY);
	RET("O_PATH dir fchdir", fchdir(d));
	RET("then relative stat", stat("f", &st) == 0 ? (long)st.st_size : -1L);
	RET("openat on an O_PATH dir", close(openat(d, "lf", O_PATH)));
	return 0;
}
