/* mount and umount2 for tmpfs, proc and sysfs as init (root) does them:
 * what /proc/self/mounts and mountinfo say (for the mounts under /mnt
 * only: the kernels mount different things at boot), statfs's f_type,
 * files of a mount vanishing with it, EXDEV across mounts, EBUSY,
 * remounts, bind mounts, and the
 * errors for bad arguments and for a process that is not root. Linux is
 * the oracle: qemu-riscv64 would mount on the host. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

/* show_mounts prints the lines of a mount table file about /mnt; for
 * mountinfo, without the mount ids and device numbers. */
static void show_mounts(const char *file, int info)
{
	char buf[8192];
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		SHOW(file, "open %s", strerrorname_np(errno));
		return;
	}
	int n = 0, r;
	while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		/* The mount point: the second field, or mountinfo's fifth,
		 * which is printed from the fourth (the root) on. */
		char *p = line, *root = line;
		for (int i = 0; i < (info ? 4 : 1) && p; i++) {
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
			if (i == 2)
				root = p;
		}
		if (p && strncmp(p, "/mnt", 4) == 0)
			SHOW(file, "%s", info ? root : line);
	}
}

static void show_statfs(const char *name, const char *path)
{
	struct statfs s;
	if (statfs(path, &s) != 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	SHOW(name, "type %#lx bsize %ld namelen %ld", (long)s.f_type, (long)s.f_bsize, (long)s.f_namelen);
}

int main(void)
{
	struct stat st, root;
	mkdir("/proc", 0555);
	RET("mount proc on /proc", mount("proc", "/proc", "proc", 0, NULL));
	RET("mkdir /mnt", mkdir("/mnt", 0755));
	mkdir("/mnt/t", 0755);
	mkdir("/mnt/p", 0755);
	mkdir("/mnt/s", 0755);
	RET("create /mnt/t/under", close(open("/mnt/t/under", O_CREAT | O_WRONLY, 0644)));

	RET("mount tmpfs", mount("scratch", "/mnt/t", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700"));
	stat("/", &root);
	RET("stat /mnt/t", stat("/mnt/t", &st));
	SHOW("mount root", "mode %o nlink %ld other dev %d", st.st_mode, (long)st.st_nlink, st.st_dev != root.st_dev);
	RET("under is covered", access("/mnt/t/under", F_OK));
	show_statfs("statfs tmpfs", "/mnt/t");
	RET("create in tmpfs", close(open("/mnt/t/f", O_CREAT | O_WRONLY, 0644)));
	RET("link across mounts", link("/mnt/t/f", "/f"));
	RET("rename across mounts", rename("/mnt/t/f", "/f"));
	RET("rename mount point", rename("/mnt/t", "/mnt/u"));
	RET("rmdir mount point", rmdir("/mnt/t"));
	RET("mkdir in tmpfs", mkdir("/mnt/t/d", 0755));
	RET("rename in tmpfs", rename("/mnt/t/f", "/mnt/t/d/g"));

	RET("mount proc", mount("proc", "/mnt/p", "proc", 0, NULL));
	show_statfs("statfs proc", "/mnt/p");
	RET("proc self", access("/mnt/p/self/stat", R_OK));
	RET("mount sysfs", mount("sysfs", "/mnt/s", "sysfs", MS_NOEXEC, NULL));
	show_statfs("statfs sysfs", "/mnt/s");
	show_mounts("/proc/self/mounts", 0);
	show_mounts("/proc/mounts", 0);
	show_mounts("/proc/self/mountinfo", 1);

	RET("mount missing target", mount("x", "/mnt/none", "tmpfs", 0, NULL));
	RET("mount on a file", mount("x", "/mnt/t/d/g", "tmpfs", 0, NULL));
	RET("mount unknown type", mount("x", "/mnt/t/d", "nosuchfs", 0, NULL));
	RET("mount bad type", mount("x", "/mnt/t/d", BAD, 0, NULL));
	RET("mount bad target", mount("x", BAD, "tmpfs", 0, NULL));

	/* Stacked: the top mount goes first. */
	RET("mount over tmpfs", mount("top", "/mnt/t", "tmpfs", 0, NULL));
	RET("lower hidden", access("/mnt/t/d", F_OK));
	RET("umount top", umount("/mnt/t"));
	RET("lower back", access("/mnt/t/d/g", F_OK));

	/* Remounts replace the mount's flags, and a tmpfs's size. */
	RET("remount", mount(NULL, "/mnt/t", NULL, MS_REMOUNT | MS_NOEXEC, "size=4m"));
	show_mounts("/proc/self/mounts", 0);
	show_statfs("statfs remounted", "/mnt/t");
	RET("remount not a mount point", mount(NULL, "/mnt/t/d", NULL, MS_REMOUNT, NULL));
	RET("remount root", mount(NULL, "/", NULL, MS_REMOUNT, NULL));
	RET("remount flags only", mount(NULL, "/mnt/t", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID, NULL));
	show_mounts("/proc/self/mountinfo", 1);

	/* A bind mount shows a directory of another mount. */
	mkdir("/mnt/b", 0755);
	RET("bind mount", mount("/mnt/t/d", "/mnt/b", NULL, MS_BIND, NULL));
	RET("bind shows the source", access("/mnt/b/g", F_OK));
	RET("create through the bind", close(open("/mnt/b/h", O_CREAT | O_WRONLY, 0644)));
	RET("seen at the source", access("/mnt/t/d/h", F_OK));
	show_mounts("/proc/self/mountinfo", 1);
	show_mounts("/proc/mounts", 0);
	RET("bind of a missing source", mount("/mnt/none", "/mnt/b", NULL, MS_BIND, NULL));
	RET("bind a file on a directory", mount("/mnt/t/d/g", "/mnt/p", NULL, MS_BIND, NULL));
	RET("umount bind", umount("/mnt/b"));
	RET("bind gone", access("/mnt/b/g", F_OK));
	RET("file stays at the source", unlink("/mnt/t/d/h"));

	RET("chdir into", chdir("/mnt/t/d"));
	RET("umount with cwd inside", umount("/mnt/t"));
	RET("chdir out", chdir("/"));
	int fd = open("/mnt/t/d/g", O_RDONLY);
	RET("umount with a file open", umount("/mnt/t"));
	close(fd);
	RET("umount parent of mount", umount("/mnt"));
	RET("umount bad flags", umount2("/mnt/t", 0x100));
	RET("umount missing", umount("/mnt/none"));

	pid_t pid = fork();
	if (pid == 0) {
		setgid(1000);
		setuid(1000);
		RET("user mount", mount("x", "/mnt/t/d", "tmpfs", 0, NULL));
		RET("user mount missing target", mount("x", "/mnt/none", "tmpfs", 0, NULL));
		RET("user umount", umount("/mnt/t"));
		RET("user umount not mounted", umount("/mnt"));
		exit(0);
	}
	waitpid(pid, NULL, 0);

	RET("umount tmpfs", umount("/mnt/t"));
	RET("files gone", access("/mnt/t/f", F_OK));
	RET("under back", access("/mnt/t/under", F_OK));
	RET("umount again", umount("/mnt/t"));
	RET("umount proc", umount2("/mnt/p", 0));
	RET("umount sysfs", umount2("/mnt/s", MNT_DETACH));
	show_mounts("/proc/self/mounts", 0);
	return 0;
}
