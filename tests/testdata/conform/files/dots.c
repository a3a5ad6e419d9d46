/* rmdir and unlink of a path ending in "." or ".." (EINVAL, ENOTEMPTY,
 * EISDIR), utimensat with a null path and AT_FDCWD (EFAULT), and chmod
 * of a directory by its owner outside its group (the set-group-ID bit
 * is dropped, as for files). */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void) {
	mkdir("dots", 0777);
	mkdir("dots/sub", 0777);
	RET("rmdir.dot", rmdir("dots/sub/."));
	RET("rmdir.dotdot", rmdir("dots/sub/.."));
	RET("rmdir.dot.slash", rmdir("dots/sub/./"));
	RET("unlink.dot", unlink("dots/sub/."));
	RET("unlink.dotdot", unlink("dots/sub/.."));
	RET("rmdir.sub", rmdir("dots/sub"));
	RET("utimensat.null.cwd", syscall(SYS_utimensat, AT_FDCWD, NULL, NULL, 0));
	RET("utimensat.null.badfd", syscall(SYS_utimensat, 99, NULL, NULL, 0));
	mkdir("dots/g", 0777);
	chown("dots/g", 1000, 4242);
	fflush(stdout);
	if (fork() == 0) {
		setgid(1000);
		setuid(1000);
		RET("chmod.sgid.dir.other.group", chmod("dots/g", 02777 | S_ISVTX));
		struct stat st;
		stat("dots/g", &st);
		SHOW("mode", "%o", st.st_mode & 07777);
		_exit(0);
	}
	wait(NULL);
	return 0;
}
