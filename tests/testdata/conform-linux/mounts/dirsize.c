/* What stat says of directories, as `ls -la` shows it: on tmpfs (a mount
 * of it, and the initramfs's root) a directory's size is 20 bytes an
 * entry, "." and ".." counted, following creations, links, renames and
 * removals, and it has no blocks; /proc's and /sys's directories have
 * size 0 (not checked: /proc/PID/fd, whose size Linux 6.2 on makes the
 * number of descriptors). Linux is the oracle: qemu-riscv64 would stat
 * the host's disk. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

static void show(const char *name, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		SHOW(name, "stat %s", strerrorname_np(errno));
		return;
	}
	SHOW(name, "size %ld blocks %ld", (long)st.st_size, (long)st.st_blocks);
}

static void tree(const char *root)
{
	char p[256], q[256];
	snprintf(p, sizeof p, "%s/d", root);
	mkdir(p, 0755);
	show("empty", p);
	snprintf(p, sizeof p, "%s/d/f", root);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof p, "%s/d/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/d", root);
	show("a file and a directory", p);
	snprintf(p, sizeof p, "%s/d/f", root);
	snprintf(q, sizeof q, "%s/d/hard", root);
	link(p, q);
	snprintf(q, sizeof q, "%s/d/sym", root);
	symlink("f", q);
	snprintf(p, sizeof p, "%s/d", root);
	show("and a link and a symlink", p);
	snprintf(p, sizeof p, "%s/d/hard", root);
	snprintf(q, sizeof q, "%s/moved", root);
	rename(p, q);
	snprintf(p, sizeof p, "%s/d", root);
	show("one renamed out", p);
	snprintf(p, sizeof p, "%s/d/f", root);
	unlink(p);
	snprintf(p, sizeof p, "%s/d/sub", root);
	rmdir(p);
	snprintf(p, sizeof p, "%s/d", root);
	show("two removed", p);
}

int main(void)
{
	mkdir("/mnt", 0755);
	RET("mount tmpfs", mount("tmpfs", "/mnt", "tmpfs", 0, NULL));
	show("tmpfs root", "/mnt");
	tree("/mnt");
	show("tmpfs root after", "/mnt");
	mkdir("/ds", 0755);
	tree("/ds");
	show("a directory of the initramfs's root", "/ds");
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show("/proc", "/proc");
	show("/proc/sys", "/proc/sys");
	mkdir("/sys", 0555);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	show("/sys", "/sys");
	return 0;
}
