/* open(O_TMPFILE): a regular file with no name in a directory, owned by
 * the caller with the mode less the umask, shown deleted in /proc; linkat
 * names it through /proc/self/fd (AT_SYMLINK_FOLLOW) or its descriptor
 * (AT_EMPTY_PATH), unless O_EXCL made it; the flag checks, and the
 * directory may go while the file stays (LTP's openat03). */
#include "../../conform/conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

static void show_stat(const char *name, int fd) {
	struct stat st;
	fstat(fd, &st);
	printf("%s: mode %o nlink %lu size %ld\n", name, st.st_mode, (unsigned long)st.st_nlink, (long)st.st_size);
	fflush(stdout);
}

static int entries(const char *dir) {
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void link_fd(const char *name, int fd, const char *to) {
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	RET(name, linkat(AT_FDCWD, path, AT_FDCWD, to, AT_SYMLINK_FOLLOW));
}

int main(void) {
	mkdir("/mnt", 0755);
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	RET("mount", mount("tmpfs", "/mnt", "tmpfs", 0, NULL));
	umask(022);
	int fd = open("/mnt", O_TMPFILE | O_RDWR, 0640);
	SHOW("open", "%d", fd >= 0);
	show_stat("new", fd);
	char buf[5000];
	memset(buf, 'x', sizeof buf);
	RET("write", write(fd, buf, sizeof buf));
	show_stat("written", fd);
	SHOW("entries.before", "%d", entries("/mnt"));
	char path[64], target[256] = {0};
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	readlink(path, target, sizeof target - 1);
	SHOW("readlink.prefix", "%d", strncmp(target, "/mnt/#", 6) == 0);
	SHOW("readlink.deleted", "%d", strstr(target, " (deleted)") != NULL);

	link_fd("link", fd, "/mnt/named");
	SHOW("entries.after", "%d", entries("/mnt"));
	struct stat st;
	stat("/mnt/named", &st);
	SHOW("named", "mode %o nlink %lu size %ld", st.st_mode, (unsigned long)st.st_nlink, (long)st.st_size);
	link_fd("link.again", fd, "/mnt/named2");
	show_stat("twice", fd);
	link_fd("link.exists", fd, "/mnt/named");

	int excl = open("/mnt", O_TMPFILE | O_WRONLY | O_EXCL, 0600);
	SHOW("excl.open", "%d", excl >= 0);
	link_fd("excl.link", excl, "/mnt/excl");
	RET("excl.empty_path", linkat(excl, "", AT_FDCWD, "/mnt/excl", AT_EMPTY_PATH));

	int other = open("/mnt", O_TMPFILE | O_WRONLY, 07777);
	show_stat("mode.07777", other);
	RET("empty_path", linkat(other, "", AT_FDCWD, "/mnt/empty", AT_EMPTY_PATH));
	RET("empty_path.cwd", linkat(AT_FDCWD, "", AT_FDCWD, "/mnt/cwd", AT_EMPTY_PATH));
	RET("no_empty_path", linkat(other, "", AT_FDCWD, "/mnt/x", 0));

	int unlinked = open("/mnt/gone", O_CREAT | O_RDWR, 0600);
	unlink("/mnt/gone");
	link_fd("unlinked.link", unlinked, "/mnt/back");

	RET("rdonly", open("/mnt", O_TMPFILE | O_RDONLY, 0600));
	RET("creat", open("/mnt", O_TMPFILE | O_CREAT | O_RDWR, 0600));
	RET("not_dir", open("/mnt/named", O_TMPFILE | O_RDWR, 0600));
	RET("missing", open("/mnt/missing", O_TMPFILE | O_RDWR, 0600));
	RET("procfs", open("/proc", O_TMPFILE | O_RDWR, 0600));
	RET("without_directory", open("/mnt", (O_TMPFILE & ~O_DIRECTORY) | O_RDWR, 0600));

	/* The directory may go; the file stays usable. */
	mkdir("/mnt/d", 0700);
	int in_d = open("/mnt/d", O_TMPFILE | O_RDWR, 0600);
	RET("rmdir", rmdir("/mnt/d"));
	RET("write.after_rmdir", pwrite(in_d, "abc", 3, 0));
	char back[4] = {0};
	RET("read.after_rmdir", pread(in_d, back, 3, 0));
	SHOW("data", "%s", back);
	return 0;
}
