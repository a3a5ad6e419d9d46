/* Extended attributes on tmpfs: the user.*, trusted.* and security.*
 * namespaces, set/get/list/remove and their l and f forms, flags, sizes,
 * and the checks for other users, symbolic links and special files.
 * Checked against Linux on a tmpfs: the oracle host's file system and
 * security modules would answer for qemu-user. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

static void show_list(const char *name, ssize_t n, const char *buf) {
	if (n < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	char out[512] = "";
	for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1) {
		strcat(out, buf + i);
		strcat(out, ",");
	}
	SHOW(name, "%zd [%s]", n, out);
}

static void show_get(const char *name, ssize_t n, const char *buf) {
	if (n < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%zd %.*s", n, (int)n, buf);
}

int main(void) {
	mkdir("/xt", 0755);
	RET("mount", mount("tmpfs", "/xt", "tmpfs", 0, NULL));
	chdir("/xt");
	int fd = open("f", O_CREAT | O_RDWR, 0644);
	char buf[256];

	RET("set.user", setxattr("f", "user.b", "two", 3, 0));
	RET("set.user.a", setxattr("f", "user.a", "one", 3, 0));
	RET("set.user.empty", setxattr("f", "user.e", NULL, 0, 0));
	RET("set.create.exists", setxattr("f", "user.a", "x", 1, XATTR_CREATE));
	RET("set.replace.missing", setxattr("f", "user.z", "x", 1, XATTR_REPLACE));
	RET("set.replace", setxattr("f", "user.a", "uno", 3, XATTR_REPLACE));
	RET("set.badflags", setxattr("f", "user.a", "x", 1, 4));
	RET("set.unknown.namespace", setxattr("f", "foo.bar", "x", 1, 0));
	RET("set.no.namespace", setxattr("f", "plain", "x", 1, 0));
	RET("set.empty.name", setxattr("f", "", "x", 1, 0));
	char longname[300];
	memset(longname, 'n', sizeof longname);
	memcpy(longname, "user.", 5);
	longname[256] = 0;
	RET("set.name.too.long", setxattr("f", longname, "x", 1, 0));
	longname[255] = 0;
	RET("set.name.255", setxattr("f", longname, "x", 1, 0));
	RET("remove.name.255", removexattr("f", longname));
	char *big = calloc(1, 70000);
	RET("set.value.too.big", setxattr("f", "user.big", big, 65537, 0));
	RET("set.missing.file", setxattr("nofile", "user.a", "x", 1, 0));
	RET("set.badflags.missing.file", setxattr("nofile", "user.a", "x", 1, 8));
	RET("set.bad.value", setxattr("f", "user.a", BAD, 4, 0));
	RET("set.bad.name", setxattr("f", BAD, "x", 1, 0));
	RET("set.trusted", setxattr("f", "trusted.t", "tt", 2, 0));
	RET("set.security", setxattr("f", "security.s", "ss", 2, 0));

	show_get("get.a", getxattr("f", "user.a", buf, sizeof buf), buf);
	show_get("get.size", getxattr("f", "user.a", NULL, 0), buf);
	show_get("get.small", getxattr("f", "user.a", buf, 2), buf);
	show_get("get.empty", getxattr("f", "user.e", buf, sizeof buf), buf);
	show_get("get.missing", getxattr("f", "user.none", buf, sizeof buf), buf);
	show_get("get.unknown.namespace", getxattr("f", "foo.bar", buf, sizeof buf), buf);
	show_get("get.trusted", getxattr("f", "trusted.t", buf, sizeof buf), buf);
	show_get("fget.security", fgetxattr(fd, "security.s", buf, sizeof buf), buf);
	show_get("get.bad.buffer", getxattr("f", "user.a", BAD, 10), buf);
	show_get("fget.badfd", fgetxattr(99, "user.a", buf, sizeof buf), buf);

	show_list("list", listxattr("f", buf, sizeof buf), buf);
	show_list("list.size", listxattr("f", NULL, 0), buf);
	show_list("list.small", listxattr("f", buf, 5), buf);
	show_list("flist", flistxattr(fd, buf, sizeof buf), buf);

	RET("remove", removexattr("f", "user.b"));
	RET("remove.missing", removexattr("f", "user.b"));
	RET("fremove", fremovexattr(fd, "user.e"));
	show_list("list.after.remove", listxattr("f", buf, sizeof buf), buf);

	struct stat before, after;
	stat("f", &before);
	struct timespec d = {0, 20 * 1000000};
	nanosleep(&d, NULL);
	fsetxattr(fd, "user.c", "c", 1, 0);
	stat("f", &after);
	SHOW("set.changes.ctime", "%d", after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
					    after.st_ctim.tv_nsec != before.st_ctim.tv_nsec);

	/* Symbolic links and special files keep no user.* attributes. */
	symlink("f", "link");
	RET("lset.user.symlink", lsetxattr("link", "user.l", "l", 1, 0));
	show_get("lget.user.symlink", lgetxattr("link", "user.a", buf, sizeof buf), buf);
	RET("lset.security.symlink", lsetxattr("link", "security.l", "l", 1, 0));
	show_list("llist.symlink", llistxattr("link", buf, sizeof buf), buf);
	show_get("get.through.symlink", getxattr("link", "user.a", buf, sizeof buf), buf);
	mkfifo("fifo", 0666);
	RET("set.user.fifo", setxattr("fifo", "user.f", "f", 1, 0));
	mkdir("dir", 0);
	chmod("dir", 01777);
	RET("set.user.dir", setxattr("dir", "user.d", "d", 1, 0));
	int p[2];
	pipe(p);
	RET("fset.pipe", fsetxattr(p[0], "user.p", "p", 1, 0));
	show_list("flist.pipe", flistxattr(p[0], buf, sizeof buf), buf);

	/* Another user: no write permission, no trusted.* or security.*. */
	chmod("f", 0644);
	fflush(stdout);
	if (fork() == 0) {
		setgid(1000);
		setuid(1000);
		RET("user.set.no.write", setxattr("f", "user.u", "u", 1, 0));
		show_get("user.get.readable", getxattr("f", "user.a", buf, sizeof buf), buf);
		show_get("user.get.trusted", getxattr("f", "trusted.t", buf, sizeof buf), buf);
		RET("user.set.trusted", setxattr("f", "trusted.u", "u", 1, 0));
		RET("user.set.security", setxattr("f", "security.u", "u", 1, 0));
		show_list("user.list", listxattr("f", buf, sizeof buf), buf);
		RET("user.set.sticky.dir", setxattr("dir", "user.u", "u", 1, 0));
		RET("user.remove.no.write", removexattr("f", "user.a"));
		int mine = open("dir/mine", O_CREAT | O_RDWR, 0600);
		RET("user.set.own.file", fsetxattr(mine, "user.m", "m", 1, 0));
		_exit(0);
	}
	wait(NULL);
	chdir("/");
	RET("umount", umount2("/xt", MNT_DETACH));
	return 0;
}
