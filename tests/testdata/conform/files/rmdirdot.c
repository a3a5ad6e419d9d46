/* What unlink and rmdir say of "." and ".." as a whole path and of the
 * root (files/dots.c has them as a path's last component), and
 * unlinkat's and fchownat's flags checked first. */
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void) {
	mkdir("d", 0755);
	mkdir("d/e", 0755);
	RET("rmdir dot", rmdir("."));
	RET("rmdir dotdot", rmdir(".."));
	RET("rmdir root", rmdir("/"));
	RET("unlink dot", unlink("."));
	RET("unlink root", unlink("/"));
	RET("rmdir empty", rmdir(""));
	RET("rmdir missing", rmdir("missing/e"));
	RET("unlinkat bad flags", unlinkat(AT_FDCWD, "d/e", 0x1000));
	RET("unlinkat dir", unlinkat(AT_FDCWD, "d/e", AT_REMOVEDIR));
	close(open("f", O_WRONLY | O_CREAT, 0644));
	RET("fchownat bad flags", fchownat(AT_FDCWD, "f", -1, -1, 9999));
	RET("fchownat", fchownat(AT_FDCWD, "f", -1, -1, 0));
	return 0;
}
