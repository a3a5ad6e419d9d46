/* mknod of each kind of node: regular file, FIFO, character and block
 * device, socket; what stat and getdents64 say of them, that a block
 * device without a driver does not open (ENXIO), and that devices are
 * root's to make. */
#define _GNU_SOURCE
#include "../conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char **)a, *(char **)b); }

int main(void) {
	mkdir("mk", 0755);
	umask(0);
	RET("mknod.reg", mknod("mk/reg", S_IFREG | 0640, 0));
	RET("mknod.fifo", mknod("mk/fifo", S_IFIFO | 0640, 0));
	RET("mknod.chr", mknod("mk/chr", S_IFCHR | 0640, makedev(1, 3)));
	RET("mknod.blk", mknod("mk/blk", S_IFBLK | 0640, makedev(240, 200)));
	RET("mknod.sock", mknod("mk/sock", S_IFSOCK | 0640, 0));
	RET("mknod.dir", mknod("mk/dir", S_IFDIR | 0640, 0));
	RET("mknod.bad", mknod("mk/bad", 0170000 | 0640, 0));
	const char *names[] = {"reg", "fifo", "chr", "blk", "sock"};
	for (int i = 0; i < 5; i++) {
		char p[32], what[32];
		snprintf(p, sizeof p, "mk/%s", names[i]);
		struct stat st;
		stat(p, &st);
		snprintf(what, sizeof what, "stat.%s", names[i]);
		SHOW(what, "type %o perm %o rdev %u:%u", st.st_mode & S_IFMT, st.st_mode & 07777, major(st.st_rdev),
		     minor(st.st_rdev));
	}
	RET("open.blk", open("mk/blk", O_RDONLY));
	RET("open.blk.path", close(open("mk/blk", O_PATH)));
	RET("open.sock", open("mk/sock", O_RDONLY));

	DIR *d = opendir("mk");
	char *lines[16];
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char buf[300];
		snprintf(buf, sizeof buf, "%s %d", e->d_name, e->d_type);
		lines[n++] = strdup(buf);
	}
	qsort(lines, n, sizeof *lines, cmp);
	for (int i = 0; i < n; i++)
		SHOW("dirent", "%s", lines[i]);

	chmod("mk", 0777);
	fflush(stdout);
	if (fork() == 0) {
		setuid(1000);
		RET("user.mknod.blk", mknod("mk/ublk", S_IFBLK | 0600, makedev(240, 1)));
		RET("user.mknod.chr", mknod("mk/uchr", S_IFCHR | 0600, makedev(1, 3)));
		RET("user.mknod.sock", mknod("mk/usock", S_IFSOCK | 0600, 0));
		_exit(0);
	}
	wait(NULL);
	return 0;
}
