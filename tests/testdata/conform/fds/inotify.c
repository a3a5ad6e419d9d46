/* inotify: the events of a file and of a directory's entries (open,
 * access, modify, attrib, close, create, delete, move with its cookie,
 * delete-self and IN_IGNORED), merged repeats, one-shot and IN_MASK_ADD
 * watches, the same descriptor for the same file, read's whole events,
 * FIONREAD, and the calls' errors. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

static int in;
static int wd_dir, wd_file;
static uint32_t first_cookie;

static const char *who(int wd) { return wd == wd_dir ? "dir" : wd == wd_file ? "file" : wd == -1 ? "none" : "other"; }

/* drain prints every queued event: watch, mask, cookie (as same/other
 * than the first seen), name. */
static void drain(const char *what) {
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n = read(in, buf, sizeof buf);
	if (n < 0) {
		SHOW(what, "-1 %s", strerrorname_np(errno));
		return;
	}
	for (char *p = buf; p < buf + n;) {
		struct inotify_event *e = (struct inotify_event *)p;
		const char *cookie = "0";
		if (e->cookie) {
			if (!first_cookie)
				first_cookie = e->cookie;
			cookie = e->cookie == first_cookie ? "c1" : "c2";
		}
		SHOW(what, "%s mask %#x cookie %s len %u name %s", who(e->wd), e->mask, cookie, e->len,
		     e->len ? e->name : "");
		p += sizeof *e + e->len;
	}
}

int main(void) {
	mkdir("in.d", 0755);
	int fd = open("in.d/f", O_CREAT | O_RDWR, 0644);
	write(fd, "hello", 5);
	close(fd);

	RET("init1.badflags", inotify_init1(1));
	in = inotify_init1(IN_NONBLOCK);
	RET("init1.nonblock", (fcntl(in, F_GETFL) & O_NONBLOCK) != 0);
	drain("empty");
	RET("add.noevents", inotify_add_watch(in, "in.d", 0));
	RET("add.add.and.create", inotify_add_watch(in, "in.d", IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE));
	RET("add.missing", inotify_add_watch(in, "in.d/none", IN_ALL_EVENTS));
	RET("add.onlydir.file", inotify_add_watch(in, "in.d/f", IN_ALL_EVENTS | IN_ONLYDIR));
	RET("add.badfd", inotify_add_watch(99, "in.d", IN_ALL_EVENTS));
	RET("add.notinotify", inotify_add_watch(0, "in.d", IN_ALL_EVENTS));
	wd_dir = inotify_add_watch(in, "in.d", IN_ALL_EVENTS);
	wd_file = inotify_add_watch(in, "in.d/f", IN_ALL_EVENTS);
	RET("wd.dir", wd_dir);
	RET("wd.file", wd_file);
	RET("add.again.same.wd", inotify_add_watch(in, "in.d/f", IN_ALL_EVENTS) == wd_file);
	RET("add.create.exists", inotify_add_watch(in, "in.d/f", IN_ALL_EVENTS | IN_MASK_CREATE));

	/* A file's life, seen by the file's watch and the directory's. */
	chmod("in.d/f", 0600);
	fd = open("in.d/f", O_RDONLY);
	char b[8];
	read(fd, b, sizeof b);
	close(fd);
	fd = open("in.d/f", O_RDWR);
	write(fd, "a", 1);
	write(fd, "b", 1); /* merges with the previous IN_MODIFY */
	ftruncate(fd, 1);
	close(fd);
	int pending = -1;
	ioctl(in, FIONREAD, &pending);
	SHOW("fionread", "%d", pending);
	drain("file.life");

	/* Too small a buffer for one event. */
	chmod("in.d", 0755);
	char small[8];
	RET("read.small", read(in, small, sizeof small));
	drain("dir.attrib");

	/* Entries of the directory. */
	fd = open("in.d/g", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	close(fd);
	mkdir("in.d/sub", 0755);
	rename("in.d/g", "in.d/h");
	symlink("h", "in.d/l");
	link("in.d/f", "in.d/f2");
	unlink("in.d/l");
	rmdir("in.d/sub");
	drain("dir.entries");

	/* Unlinking the file's last name: attrib, delete, delete-self, ignored. */
	unlink("in.d/f2");
	unlink("in.d/f");
	drain("file.unlink");

	/* A watch removed: IN_IGNORED; its wd is gone. */
	int wd_h = inotify_add_watch(in, "in.d/h", IN_OPEN | IN_ONESHOT);
	RET("wd.h.new", wd_h > wd_file);
	close(open("in.d/h", O_RDONLY));
	close(open("in.d/h", O_RDONLY));
	drain("oneshot");
	RET("rm.oneshot.gone", inotify_rm_watch(in, wd_h));
	wd_h = inotify_add_watch(in, "in.d/h", IN_OPEN);
	RET("mask.add", inotify_add_watch(in, "in.d/h", IN_CLOSE | IN_MASK_ADD) == wd_h);
	close(open("in.d/h", O_RDONLY));
	RET("rm.watch", inotify_rm_watch(in, wd_h));
	RET("rm.again", inotify_rm_watch(in, wd_h));
	RET("rm.notinotify", inotify_rm_watch(0, 1));
	drain("maskadd.rm");

	/* The directory removed. */
	unlink("in.d/h");
	rmdir("in.d");
	drain("dir.rmdir");

	struct pollfd pfd = {.fd = in, .events = POLLIN};
	RET("poll.empty", poll(&pfd, 1, 0));
	mkdir("in.e", 0755);
	wd_dir = inotify_add_watch(in, "in.e", IN_CREATE);
	close(open("in.e/x", O_CREAT | O_RDONLY, 0644));
	RET("poll.event", poll(&pfd, 1, 0));
	drain("create.only");
	unlink("in.e/x");
	rmdir("in.e");
	drain("rmdir.ignored");
	close(in);
	return 0;
}
