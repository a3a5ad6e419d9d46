/* chroot: the errors in Linux's order (the lookup, search permission in
 * the directory, then CAP_SYS_CHROOT), and what a chrooted process sees:
 * absolute paths and links start at the new root, ".." stops there, a
 * working directory left outside still reaches outside ("(unreachable)"
 * in getcwd, which glibc refuses), children inherit the root, CLONE_FS
 * shares it, and /proc/PID/root and the magic links show paths from the
 * reader's root. qemu-user would chroot the host's process, so Linux
 * itself is the oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void put(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, data, strlen(data));
	close(fd);
}

/* show prints the first bytes of a file, or the error. */
static void show(const char *name, const char *path)
{
	char buf[16] = {0};
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	read(fd, buf, sizeof buf - 1);
	close(fd);
	SHOW(name, "%s", buf);
}

static void show_link(const char *name, const char *path)
{
	char buf[PATH_MAX] = {0};
	errno = 0;
	if (readlink(path, buf, sizeof buf - 1) < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%s", buf);
}

static void show_cwd(const char *name)
{
	char raw[PATH_MAX] = {0}, buf[PATH_MAX];
	long n = syscall(SYS_getcwd, raw, sizeof raw);
	SHOW(name, "%ld %s", n, n > 0 ? raw : strerrorname_np(errno));
	errno = 0;
	char *got = getcwd(buf, sizeof buf);
	SHOW(name, "glibc %s", got ? got : strerrorname_np(errno));
}

static int go[2], done[2];
static int chroot_child(void *arg)
{
	(void)arg;
	chroot("/cr/dir");
	write(go[1], "x", 1);
	char c;
	read(done[0], &c, 1);
	_exit(0);
}

static char stack[64 * 1024] __attribute__((aligned(16)));

/* copy copies the program itself into the new root, to exec there. */
static void copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	long n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		write(out, buf, n);
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	if (argc > 1) { /* exec'd in the chroot */
		show(argv[1], "/file");
		return 0;
	}
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/cr", 0755);
	mkdir("/cr/dir", 0755);
	mkdir("/cr/dir/sub", 0755);
	mkdir("/cr/dir/proc", 0555);
	mkdir("/cr/closed", 0);
	put("/cr/dir/file", "inside");
	put("/file", "top");
	put("/cr/outside", "outside");
	symlink("/file", "/cr/dir/abs");
	symlink("../../../file", "/cr/dir/up");
	symlink("loop2", "/cr/loop1");
	symlink("loop1", "/cr/loop2");
	mount("proc", "/cr/dir/proc", "proc", 0, NULL);
	copy("/proc/self/exe", "/cr/dir/prog");

	RET("not.dir", chroot("/cr/outside"));
	RET("missing", chroot("/cr/none"));
	RET("loop", chroot("/cr/loop1"));
	RET("bad.address", chroot(BAD));
	char *longname = malloc(PATH_MAX + 2);
	memset(longname, 'a', PATH_MAX + 1);
	longname[PATH_MAX + 1] = 0;
	RET("too.long", chroot(longname));
	RET("component.too.long", chroot("/cr/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	RET("file.slash", chroot("/cr/outside/"));

	if (fork() == 0) {
		seteuid(65534);
		RET("unprivileged", chroot("/cr/dir"));
		RET("unprivileged.no.search", chroot("/cr/closed"));
		RET("unprivileged.missing", chroot("/cr/none"));
		_exit(0);
	}
	wait(NULL);

	if (fork() == 0) {
		RET("chroot", chroot("/cr/dir"));
		show_cwd("cwd.outside");
		show("absolute", "/file");
		show("relative.from.outside.cwd", "cr/outside");
		show("link.absolute", "/abs");
		show("link.up", "/up");
		show("dotdot.above.root", "/../../file");
		show_link("proc.root", "/proc/self/root");
		show_link("proc.cwd.outside", "/proc/self/cwd");
		RET("chdir.root", chdir("/"));
		show_cwd("cwd.root");
		show("dotdot.from.root", "../../file");
		put("/sub/x", "bound");
		mkdir("/bindto", 0755);
		RET("bind.relative.source", mount("sub", "/bindto", NULL, MS_BIND, NULL));
		show("bind.sees", "/bindto/x");
		RET("chdir.sub", chdir("sub"));
		show_cwd("cwd.sub");
		show("dotdot.from.sub", "../../../file");
		show_link("proc.cwd", "/proc/self/cwd");
		int pfd[2];
		pipe(pfd);
		write(pfd[1], "piped", 5);
		char ppath[64];
		snprintf(ppath, sizeof ppath, "/proc/self/fd/%d", pfd[0]);
		show("proc.fd.pipe", ppath);
		struct stat pst;
		RET("proc.fd.pipe.stat", stat(ppath, &pst) == 0 && S_ISFIFO(pst.st_mode));
		struct stat st;
		RET("stat.dotdot.is.root", stat("/..", &st) == 0 && st.st_ino == (stat("/", &st), st.st_ino));
		if (fork() == 0) {
			show("inherited", "/file");
			RET("chroot.again", chroot("/sub"));
			RET("sub.file", access("/file", F_OK));
			RET("chroot.dotdot.stays", chroot(".."));
			RET("chroot.dotdot.file", access("/file", F_OK));
			_exit(0);
		}
		wait(NULL);
		show("parent.unchanged", "/file");
		put("/script", "#!/prog\n");
		chmod("/script", 0755);
		if (fork() == 0) {
			execl("/script", "script", "exec.script", NULL);
			_exit(1);
		}
		wait(NULL);
		execl("/prog", "prog", "exec.in.root", NULL);
		SHOW("exec.in.root", "-1 %s", strerrorname_np(errno));
		_exit(0);
	}
	wait(NULL);
	show("unchanged", "/file");

	/* The root read from outside, and shared by CLONE_FS. */
	pipe(go);
	pipe(done);
	pid_t child = clone(chroot_child, stack + sizeof stack, CLONE_FS | SIGCHLD, NULL);
	char c;
	read(go[0], &c, 1);
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/root", child);
	show_link("clone_fs.child.root", link);
	show("clone_fs.shared", "/file");
	write(done[1], "x", 1);
	waitpid(child, NULL, 0);
	show_link("clone_fs.own.root", "/proc/self/root");
	RET("chroot.back", chroot("/proc/self/root/../.."));
	return 0;
}
