/* File permissions for an unprivileged process: root prepares files and
 * directories in the working directory, then the program becomes uid 1000
 * (gid 1000, groups 1000 and 2000) and tries to read, write, truncate,
 * chmod, chown, create, remove, rename, search and execute them. */
#include "../conform.h"
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* OPEN prints "ok" for a descriptor (closed at once) or the error. */
#define OPEN(name, ...)                                                        \
	do {                                                                   \
		errno = 0;                                                     \
		int fd_ = open(__VA_ARGS__);                                   \
		if (fd_ < 0)                                                   \
			printf("%s: -1 %s\n", name, strerrorname_np(errno));   \
		else                                                           \
			printf("%s: ok\n", name), close(fd_);                  \
		fflush(stdout);                                                \
	} while (0)

static void make(const char *path, mode_t mode, const char *data) {
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data) || fchmod(fd, mode) < 0) {
		printf("setup %s: %s\n", path, strerrorname_np(errno));
		exit(1);
	}
	close(fd);
}

static void show_owner(const char *name, const char *path) {
	struct stat st;
	if (stat(path, &st) < 0) {
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
	} else {
		printf("%s: uid %u gid %u perm %o size %ld\n", name, st.st_uid, st.st_gid, st.st_mode & 07777,
		       S_ISDIR(st.st_mode) ? 0L : (long)st.st_size);
	}
	fflush(stdout);
}

int main(void) {
	umask(0);
	/* Root's setup. The working directory must be searchable by others. */
	RET("chmod.cwd", chmod(".", 0755));
	make("secret", 0600, "root only\n");
	make("public", 0644, "everyone reads\n");
	make("shared", 0664, "group 2000 writes\n");
	RET("chown.shared", chown("shared", 0, 2000));
	make("others", 0606, "others but not group\n");
	RET("chown.others", chown("others", 0, 2000));
	make("prog", 0700, "#!/bin/sh\n");
	RET("mkdir.rootdir", mkdir("rootdir", 0755));
	make("rootdir/f", 0666, "inside\n");
	RET("mkdir.private", mkdir("private", 0700));
	make("private/f", 0666, "hidden\n");
	RET("mkdir.listonly", mkdir("listonly", 0744));
	make("listonly/f", 0666, "unreachable\n");
	RET("mkdir.userdir", mkdir("userdir", 0755));
	RET("chown.userdir", chown("userdir", 1000, 1000));
	RET("mkdir.tmp", mkdir("tmp", 01777));
	make("tmp/rootfile", 0666, "sticky\n");
	RET("mkdir.sgid", mkdir("sgid", 0777));
	RET("chown.sgid", chown("sgid", 0, 3000));
	RET("chmod.sgid", chmod("sgid", 02777));
	show_owner("stat.sgid", "sgid");
	RET("exec.root.noexec", execl("public", "public", (char *)NULL));

	/* Become uid 1000. */
	gid_t groups[] = {1000, 2000};
	RET("setgroups", setgroups(2, groups));
	RET("setgid", setgid(1000));
	RET("setuid", setuid(1000));
	uid_t r, e, s;
	RET("getresuid", getresuid(&r, &e, &s));
	SHOW("uids", "%u %u %u", r, e, s);
	gid_t gr, ge, gs;
	RET("getresgid", getresgid(&gr, &ge, &gs));
	SHOW("gids", "%u %u %u", gr, ge, gs);
	RET("setuid.back", setuid(0));
	RET("setgroups.user", setgroups(2, groups));
	umask(027);

	/* Reading and writing root's files. */
	OPEN("open.secret.r", "secret", O_RDONLY);
	OPEN("open.secret.w", "secret", O_WRONLY);
	OPEN("open.secret.trunc", "secret", O_WRONLY | O_TRUNC);
	OPEN("open.secret.creat", "secret", O_CREAT | O_RDONLY, 0644);
	OPEN("open.public.r", "public", O_RDONLY);
	OPEN("open.public.w", "public", O_WRONLY);
	OPEN("open.public.rdwr", "public", O_RDWR);
	OPEN("open.public.rdonly.trunc", "public", O_RDONLY | O_TRUNC);
	OPEN("open.shared.rdwr", "shared", O_RDWR);
	OPEN("open.others.r", "others", O_RDONLY);
	OPEN("open.dir.w", "rootdir", O_WRONLY);
	OPEN("open.dir.r", "rootdir", O_RDONLY | O_DIRECTORY);
	RET("truncate.secret", truncate("secret", 0));
	RET("truncate.public", truncate("public", 0));
	RET("truncate.shared", truncate("shared", 5));
	RET("truncate.dir", truncate("rootdir", 0));
	int fd = open("public", O_RDONLY);
	RET("ftruncate.rdonly", ftruncate(fd, 0));
	RET("fchmod.public", fchmod(fd, 0666));
	RET("fchown.public", fchown(fd, 1000, 1000));
	close(fd);
	struct timespec given[2] = {{1, 0}, {2, 0}}, omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
	RET("utimens.public.now", utimensat(AT_FDCWD, "public", NULL, 0));
	RET("utimens.public.given", utimensat(AT_FDCWD, "public", given, 0));
	RET("utimens.public.omit", utimensat(AT_FDCWD, "public", omit, 0));
	RET("utimens.shared.now", utimensat(AT_FDCWD, "shared", NULL, 0));
	RET("utimens.shared.given", utimensat(AT_FDCWD, "shared", given, 0));
	RET("chmod.secret", chmod("secret", 0777));
	RET("chown.secret", chown("secret", 1000, 1000));
	RET("chown.secret.group", chown("secret", -1, 1000));
	show_owner("stat.secret", "secret");
	show_owner("stat.public", "public");
	show_owner("stat.shared", "shared");

	/* Search permission on every directory of a path. */
	OPEN("open.private.f", "private/f", O_RDONLY);
	struct stat st;
	RET("stat.private.f", stat("private/f", &st));
	RET("stat.listonly.f", stat("listonly/f", &st));
	RET("stat.listonly", stat("listonly", &st));
	RET("chdir.private", chdir("private"));
	RET("access.private.f", access("private/f", F_OK));

	/* Creating and removing in root's directory. */
	OPEN("create.rootdir", "rootdir/new", O_CREAT | O_WRONLY, 0644);
	RET("mkdir.rootdir.sub", mkdir("rootdir/sub", 0755));
	RET("unlink.rootdir.f", unlink("rootdir/f"));
	RET("rename.out.of.rootdir", rename("rootdir/f", "userdir/f"));
	RET("rename.onto.itself", rename("rootdir/f", "rootdir/f"));
	RET("link.into.rootdir", link("public", "rootdir/p"));
	RET("symlink.into.rootdir", symlink("public", "rootdir/s"));
	RET("rmdir.rootdir", rmdir("rootdir"));
	RET("rmdir.userdir.in.root.dir", rmdir("userdir"));

	/* The user's own directory. */
	OPEN("create.userdir", "userdir/mine", O_CREAT | O_WRONLY, 0666);
	show_owner("stat.mine", "userdir/mine");
	RET("mkdir.userdir.sub", mkdir("userdir/sub", 0777));
	show_owner("stat.userdir.sub", "userdir/sub");
	OPEN("create.nomode", "userdir/nomode", O_CREAT | O_RDWR, 0);
	OPEN("reopen.nomode", "userdir/nomode", O_RDONLY);
	RET("chmod.mine", chmod("userdir/mine", 0604));
	show_owner("stat.mine.chmod", "userdir/mine");
	RET("chown.mine.group2000", chown("userdir/mine", -1, 2000));
	RET("chown.mine.group3000", chown("userdir/mine", -1, 3000));
	RET("chown.mine.user", chown("userdir/mine", 0, -1));
	RET("chown.mine.self", chown("userdir/mine", 1000, -1));
	show_owner("stat.mine.chown", "userdir/mine");
	RET("chmod.mine.setgid.foreign", chmod("userdir/mine", 02644));
	RET("chown.mine.back", chown("userdir/mine", -1, 1000));
	RET("chmod.mine.setgid.own", chmod("userdir/mine", 02644));
	show_owner("stat.mine.setgid", "userdir/mine");
	RET("rename.within.userdir", rename("userdir/mine", "userdir/yours"));
	RET("rename.to.rootdir", rename("userdir/yours", "rootdir/yours"));
	RET("unlink.userdir", unlink("userdir/yours"));
	RET("chmod.userdir.readonly", chmod("userdir", 0555));
	OPEN("create.readonly.dir", "userdir/again", O_CREAT | O_WRONLY, 0644);
	RET("unlink.readonly.dir", unlink("userdir/nomode"));
	RET("chmod.userdir.back", chmod("userdir", 0755));

	/* A set-group-ID directory gives its group to what is made in it. */
	OPEN("create.sgid", "sgid/f", O_CREAT | O_WRONLY, 0666);
	show_owner("stat.sgid.f", "sgid/f");
	RET("mkdir.sgid.d", mkdir("sgid/d", 0777));
	show_owner("stat.sgid.d", "sgid/d");

	/* The sticky directory: only the owner of an entry removes it. */
	RET("unlink.sticky.root", unlink("tmp/rootfile"));
	RET("rename.sticky.root", rename("tmp/rootfile", "tmp/moved"));
	OPEN("open.sticky.root.w", "tmp/rootfile", O_WRONLY);
	OPEN("create.sticky", "tmp/mine", O_CREAT | O_WRONLY, 0644);
	RET("rename.sticky.mine", rename("tmp/mine", "tmp/mine2"));
	RET("unlink.sticky.mine", unlink("tmp/mine2"));

	/* Executing. */
	RET("exec.noexec", execl("public", "public", (char *)NULL));
	RET("exec.owner.only", execl("prog", "prog", (char *)NULL));
	RET("exec.dir", execl("rootdir", "rootdir", (char *)NULL));

	/* access checks the real ids. */
	RET("access.secret.r", access("secret", R_OK));
	RET("access.secret.f", access("secret", F_OK));
	RET("access.public.r", access("public", R_OK));
	RET("access.public.w", access("public", W_OK));
	RET("access.public.x", access("public", X_OK));
	RET("access.shared.rw", access("shared", R_OK | W_OK));
	RET("access.others.r", access("others", R_OK));
	RET("access.bad.mode", access("public", 8));

	/* A child inherits the ids. */
	pid_t pid = fork();
	if (pid == 0) {
		OPEN("child.open.secret", "secret", O_RDONLY);
		RET("child.setuid.root", setuid(0));
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW("child.status", "%d", WEXITSTATUS(status));
	return 0;
}
