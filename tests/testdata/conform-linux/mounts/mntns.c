/* Mount namespaces and pivot_root as init (root) meets them: a child's
 * unshare(CLONE_NEWNS) copies the mounts, and its mounts and umounts are
 * its own (what each side can reach, and /proc/self/mountinfo's lines
 * under /mnt); rmdir of a mount point is EBUSY only where it is one, and
 * elsewhere takes the mount with it; setns into the child's namespace;
 * clone's and unshare's errors; pivot_root's errors and its success in a
 * chroot'ed tmpfs, as LTP's pivot_root01 does it (from the initramfs
 * root it is EINVAL). Linux is the oracle. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* show_mountinfo prints file's lines about /mnt, from the root field on
 * (mount ids and device numbers differ between kernels). */
static void show_mountinfo(const char *name, const char *file)
{
	char buf[8192];
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		SHOW(name, "open %s", strerrorname_np(errno));
		return;
	}
	int n = 0, r;
	while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *p = line, *root = line;
		for (int i = 0; i < 4 && p; i++) {
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
			if (i == 2)
				root = p;
		}
		if (p && strncmp(p, "/mnt", 4) == 0)
			SHOW(name, "%s", root);
	}
}

static int pivot_root(const char *new_root, const char *put_old)
{
	return syscall(SYS_pivot_root, new_root, put_old);
}

/* pivot runs in a child of its own namespace, chroot'ed in a tmpfs. */
static void pivot(void)
{
	RET("pivot unshare", unshare(CLONE_NEWNS));
	mkdir("/mnt/jail", 0755);
	RET("mount jail", mount("jail", "/mnt/jail", "tmpfs", 0, NULL));
	RET("pivot from the initramfs root", pivot_root("/mnt/jail", "/mnt/jail"));
	mkdir("/mnt/jail/new", 0755);
	mkdir("/mnt/jail/keep", 0755);
	RET("chroot", chroot("/mnt/jail"));
	RET("chdir /", chdir("/"));
	RET("new root on the root's mount", pivot_root("/new", "/new"));
	RET("mount new", mount("new", "/new", "tmpfs", 0, NULL));
	mkdir("/new/old", 0755);
	close(open("/new/marker", O_CREAT | O_WRONLY, 0644));
	RET("put_old on the root's mount", pivot_root("/new", "/keep"));
	mkdir("/other", 0755);
	RET("mount other", mount("other", "/other", "tmpfs", 0, NULL));
	mkdir("/other/po", 0755);
	RET("put_old not under new_root", pivot_root("/new", "/other/po"));
	RET("put_old a file", pivot_root("/new", "/new/marker"));
	RET("new_root missing", pivot_root("/none", "/new/old"));
	RET("new_root not a mount point", pivot_root("/new/old", "/new/old"));
	RET("new_root bad", pivot_root(BAD, "/new/old"));
	pid_t pid = fork();
	if (pid == 0) {
		setgid(1000);
		setuid(1000);
		RET("user pivot_root", pivot_root(BAD, "/new/old"));
		exit(0);
	}
	waitpid(pid, NULL, 0);
	RET("chdir /new", chdir("/new"));
	RET("pivot_root", pivot_root("/new", "/new/old"));
	char cwd[256];
	SHOW("cwd after", "%s", getcwd(cwd, sizeof cwd) ? cwd : strerrorname_np(errno));
	RET("new root's file at /", access("/marker", F_OK));
	RET("old root under put_old", access("/old/keep", F_OK));
	RET("old root's mount under put_old", access("/old/other/po", F_OK));
	RET("new root's old place", access("/old/new/marker", F_OK));
	RET("umount old root", umount2("/old", MNT_DETACH));
	RET("old root gone", access("/old/keep", F_OK));
	exit(0);
}

int main(void)
{
	mkdir("/proc", 0555);
	RET("mount proc", mount("proc", "/proc", "proc", 0, NULL));
	mkdir("/mnt", 0755);
	mkdir("/mnt/shared", 0755);
	mkdir("/mnt/a", 0755);
	RET("mount shared", mount("shared", "/mnt/shared", "tmpfs", 0, NULL));
	RET("create in shared", close(open("/mnt/shared/x", O_CREAT | O_WRONLY, 0644)));
	char parent_ns[64] = "", child_ns[64] = "";
	readlink("/proc/self/ns/mnt", parent_ns, sizeof parent_ns - 1);
	SHOW("ns link", "%.4s", parent_ns);

	int up[2], down[2];
	pipe(up);
	pipe(down);
	pid_t child = fork();
	if (child == 0) {
		char c;
		RET("unshare", unshare(CLONE_NEWNS));
		readlink("/proc/self/ns/mnt", child_ns, sizeof child_ns - 1);
		SHOW("child ns differs", "%d", strcmp(parent_ns, child_ns) != 0);
		RET("child sees shared", access("/mnt/shared/x", F_OK));
		RET("child mount a", mount("mine", "/mnt/a", "tmpfs", MS_NOEXEC, "size=1m"));
		RET("child create in a", close(open("/mnt/a/f", O_CREAT | O_WRONLY, 0644)));
		RET("child umount shared", umount("/mnt/shared"));
		RET("child shared gone", access("/mnt/shared/x", F_OK));
		RET("child rmdir its mount point", rmdir("/mnt/a"));
		show_mountinfo("child mountinfo", "/proc/self/mountinfo");
		write(up[1], "1", 1);
		read(down[0], &c, 1);
		RET("child's mount after the parent's rmdir", access("/mnt/a/f", F_OK));
		show_mountinfo("child mountinfo after", "/proc/self/mountinfo");
		exit(0);
	}
	char c;
	read(up[0], &c, 1);
	RET("parent a is empty", access("/mnt/a/f", F_OK));
	RET("parent shared", access("/mnt/shared/x", F_OK));
	show_mountinfo("parent mountinfo", "/proc/self/mountinfo");
	char file[64];
	snprintf(file, sizeof file, "/proc/%d/mountinfo", child);
	show_mountinfo("child's from the parent", file);

	snprintf(file, sizeof file, "/proc/%d/ns/mnt", child);
	int nsfd = open(file, O_RDONLY);
	pid_t joiner = fork();
	if (joiner == 0) {
		RET("chdir /mnt", chdir("/mnt"));
		RET("setns wrong kind", setns(nsfd, CLONE_NEWUTS));
		RET("setns", setns(nsfd, CLONE_NEWNS));
		char cwd[256];
		SHOW("cwd after setns", "%s", getcwd(cwd, sizeof cwd) ? cwd : strerrorname_np(errno));
		RET("joiner sees a", access("/mnt/a/f", F_OK));
		RET("joiner sees shared", access("/mnt/shared/x", F_OK));
		exit(0);
	}
	waitpid(joiner, NULL, 0);
	close(nsfd);

	RET("parent rmdir the child's mount point", rmdir("/mnt/a"));
	write(down[1], "1", 1);
	waitpid(child, NULL, 0);

	RET("clone NEWNS|FS", syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0));
	pid_t pid = fork();
	if (pid == 0) {
		setgid(1000);
		setuid(1000);
		RET("user unshare", unshare(CLONE_NEWNS));
		exit(0);
	}
	waitpid(pid, NULL, 0);

	pid = fork();
	if (pid == 0)
		pivot();
	waitpid(pid, NULL, 0);
	RET("jail not in the parent", access("/mnt/jail/new", F_OK));
	show_mountinfo("parent mountinfo at the end", "/proc/self/mountinfo");
	return 0;
}
