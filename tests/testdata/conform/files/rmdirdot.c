/* What unlink and rmdir say of a path that names no entry ("." or ".."
 * last, the root), unlinkat's and fchownat's flags checked first, and
 * utimensat with neither a path nor a descriptor (utimes(NULL, ...)). */
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

int main(void) {
	mkdir("d", 0755);
	mkdir("d/e", 0755);
	RET("rmdir dot", rmdir("."));
	RET("rmdir dotdot", rmdir(".."));
	RET("rmdir d/.", rmdir("d/."));
	RET("rmdir d/e/..", rmdir("d/e/.."));
	RET("rmdir d/./", rmdir("d/./"));
	RET("rmdir root", rmdir("/"));
	RET("unlink dot", unlink("."));
	RET("unlink d/..", unlink("d/.."));
	RET("unlink root", unlink("/"));
	RET("rmdir empty", rmdir(""));
	RET("rmdir missing/.", rmdir("missing/e"));
	RET("unlinkat bad flags", unlinkat(AT_FDCWD, "d/e", 0x1000));
	RET("unlinkat dir", unlinkat(AT_FDCWD, "d/e", AT_REMOVEDIR));
	close(open("f", O_WRONLY | O_CREAT, 0644));
	RET("fchownat bad flags", fchownat(AT_FDCWD, "f", -1, -1, 9999));
	RET("fchownat", fchownat(AT_FDCWD, "f", -1, -1, 0));
	struct timespec ts[2] = {{1, 0}, {2, 0}};
	RET("utimensat no path at cwd", syscall(SYS_utimensat, AT_FDCWD, NULL, ts, 0));
	int fd = open("f", O_RDONLY);
	RET("utimensat no path fd", syscall(SYS_utimensat, fd, NULL, ts, 0));
	RET("utimensat no path bad fd", syscall(SYS_utimensat, 1000, NULL, ts, 0));
	struct stat st;
	stat("f", &st);
	SHOW("mtime", "%ld", (long)st.st_mtime);
	return 0;
}
