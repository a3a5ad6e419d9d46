/* inotify's watches in /proc/self/fdinfo (the mask with its flags, LTP
 * inotify12) and IN_EXCL_UNLINK: a directory watch keeps hearing of an
 * open file after its unlink, unless the watch says IN_EXCL_UNLINK. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>

static void fdinfo_mask(const char *name, int in) {
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", in);
	FILE *f = fopen(path, "r");
	unsigned mask = 0;
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "inotify wd:%*x ino:%*x sdev:%*x mask:%x", &mask) == 1)
			found++;
	if (f)
		fclose(f);
	SHOW(name, "watches %d mask %#x", found, mask);
}

static int events(int in) {
	char buf[4096];
	ssize_t n = read(in, buf, sizeof buf);
	int k = 0;
	for (char *p = buf; n > 0 && p < buf + n; k++)
		p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len;
	return k;
}

int main(void) {
	mkdir("ifd", 0755);
	unsigned masks[] = {IN_MODIFY, IN_MODIFY | IN_ONESHOT, IN_MODIFY | IN_EXCL_UNLINK};
	const char *names[] = {"plain", "oneshot", "excl_unlink"};
	for (int i = 0; i < 3; i++) {
		int in = inotify_init1(IN_NONBLOCK);
		int fd = open("ifd/f", O_CREAT | O_RDWR, 0644);
		inotify_add_watch(in, "ifd", masks[i]);
		char what[64];
		snprintf(what, sizeof what, "%s.fdinfo", names[i]);
		fdinfo_mask(what, in);
		write(fd, "1", 1);
		snprintf(what, sizeof what, "%s.first", names[i]);
		SHOW(what, "%d", events(in));
		unlink("ifd/f");
		write(fd, "2", 1);
		close(fd);
		snprintf(what, sizeof what, "%s.after.unlink", names[i]);
		SHOW(what, "%d", events(in));
		close(in);
	}
	return 0;
}
