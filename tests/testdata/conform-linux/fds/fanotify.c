/* fanotify(7): fanotify_init's flags and errors, fanotify_mark's errors,
 * inode, directory (FAN_EVENT_ON_CHILD, FAN_ONDIR), ignored and mount
 * marks; events with their masks merged per object and process, the
 * caller's pid and a file of the object opened in the reader; permission
 * events allowed, denied, and let go when the group closes; responses'
 * errors; the queue's FAN_Q_OVERFLOW at 16384 events and
 * FAN_UNLIMITED_QUEUE (LTP's fanotify02, 04, 07, 08, 11). */
#include "../../conform/conform.h"
#include <stdlib.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NOTIFY_EVENTS (FAN_OPEN | FAN_CLOSE | FAN_MODIFY | FAN_ACCESS)

/* drain prints the queued events: mask, whether the pid is want's, and
 * what the event's file is. */
static void drain(const char *name, int g, pid_t want) {
	struct fanotify_event_metadata ev[16];
	ssize_t n = read(g, ev, sizeof ev);
	if (n < 0) {
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
		fflush(stdout);
		return;
	}
	for (int i = 0; i < n / (ssize_t)sizeof ev[0]; i++) {
		char link[64] = "-", proc[32];
		if (ev[i].fd >= 0) {
			snprintf(proc, sizeof proc, "/proc/self/fd/%d", ev[i].fd);
			ssize_t k = readlink(proc, link, sizeof link - 1);
			link[k < 0 ? 0 : k] = 0;
			int fl = fcntl(ev[i].fd, F_GETFL);
			printf("%s: mask %#llx pid %s file %s flags %#o vers %d len %d/%d\n", name,
			       (unsigned long long)ev[i].mask, ev[i].pid == want ? "ok" : "other", link,
			       fl & (O_ACCMODE | O_NONBLOCK), ev[i].vers, ev[i].event_len, ev[i].metadata_len);
			close(ev[i].fd);
		} else {
			printf("%s: mask %#llx fd %d\n", name, (unsigned long long)ev[i].mask, ev[i].fd);
		}
	}
	printf("%s: %zd events\n", name, n / (ssize_t)sizeof ev[0]);
	fflush(stdout);
}

static void touch(const char *path) { close(open(path, O_CREAT | O_WRONLY, 0644)); }

static void read_file(const char *path) {
	char c;
	int fd = open(path, O_RDONLY);
	read(fd, &c, 1);
	close(fd);
}

static void init_errors(void) {
	RET("init.unknown", fanotify_init(0x80000000, O_RDONLY));
	RET("init.two_classes", fanotify_init(FAN_CLASS_CONTENT | FAN_CLASS_PRE_CONTENT, O_RDONLY));
	RET("init.accmode", fanotify_init(FAN_CLASS_NOTIF, O_ACCMODE));
	RET("init.file_flag", fanotify_init(FAN_CLASS_NOTIF, O_CREAT));
	int g = fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
	SHOW("init.plain", "fd_flags %d fl %#o", fcntl(g, F_GETFD), fcntl(g, F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	close(g);
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);
	SHOW("init.cloexec_nonblock", "fd_flags %d fl %#o", fcntl(g, F_GETFD),
	     fcntl(g, F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	char buf[64];
	RET("read.empty_nonblock", read(g, buf, sizeof buf));
	close(g);
	pid_t pid = fork();
	if (pid == 0) {
		setresuid(65534, 65534, 65534);
		RET("init.unprivileged", fanotify_init(FAN_CLASS_NOTIF, O_RDONLY));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

static void mark_errors(void) {
	int g = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	int p[2];
	pipe(p);
	RET("mark.no_mask", fanotify_mark(g, FAN_MARK_ADD, 0, AT_FDCWD, "/mnt/d"));
	RET("mark.add_remove", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, "/mnt/d"));
	RET("mark.no_command", fanotify_mark(g, 0, FAN_OPEN, AT_FDCWD, "/mnt/d"));
	RET("mark.unknown_flag", fanotify_mark(g, FAN_MARK_ADD | 0x10000, FAN_OPEN, AT_FDCWD, "/mnt/d"));
	RET("mark.high_mask", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN | (1ULL << 40), AT_FDCWD, "/mnt/d"));
	RET("mark.create_no_fid", fanotify_mark(g, FAN_MARK_ADD, FAN_CREATE, AT_FDCWD, "/mnt/d"));
	RET("mark.perm_in_notif", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, "/mnt/d"));
	RET("mark.bad_fd", fanotify_mark(-1, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "/mnt/d"));
	RET("mark.not_group", fanotify_mark(p[0], FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "/mnt/d"));
	RET("mark.missing", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "/mnt/nothing"));
	RET("mark.onlydir_file", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_ONLYDIR, FAN_OPEN, AT_FDCWD, "/mnt/d/f"));
	RET("mark.remove_unmarked", fanotify_mark(g, FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, "/mnt/d/f"));
	RET("mark.flush_with_path_flag", fanotify_mark(g, FAN_MARK_FLUSH | FAN_MARK_ONLYDIR, 0, AT_FDCWD, "/mnt/d"));
	RET("mark.flush", fanotify_mark(g, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL));
	int dfd = open("/mnt/d/f", O_RDONLY);
	RET("mark.by_fd", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN, dfd, NULL));
	close(dfd);
	read_file("/mnt/d/f");
	drain("mark.by_fd.events", g, getpid());
	RET("mark.remove", fanotify_mark(g, FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, "/mnt/d/f"));
	RET("mark.remove_again", fanotify_mark(g, FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, "/mnt/d/f"));
	close(p[0]);
	close(p[1]);
	close(g);
}

static void events(void) {
	int g = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	RET("events.mark_dir", fanotify_mark(g, FAN_MARK_ADD, NOTIFY_EVENTS | FAN_EVENT_ON_CHILD, AT_FDCWD, "/mnt/d"));
	/* Open, write and close merge into one event of the file. */
	int fd = open("/mnt/d/f", O_RDWR);
	write(fd, "hello", 5);
	close(fd);
	int avail = 0;
	ioctl(g, FIONREAD, &avail);
	SHOW("events.fionread", "%d", avail);
	drain("events.write", g, getpid());
	read_file("/mnt/d/f");
	drain("events.read", g, getpid());
	/* Without FAN_ONDIR the directory's own open is not heard. */
	close(open("/mnt/d", O_RDONLY | O_DIRECTORY));
	drain("events.dir_without_ondir", g, getpid());
	RET("events.add_ondir", fanotify_mark(g, FAN_MARK_ADD, FAN_ONDIR, AT_FDCWD, "/mnt/d"));
	close(open("/mnt/d", O_RDONLY | O_DIRECTORY));
	drain("events.dir_with_ondir", g, getpid());
	/* A child's events carry the child's pid. */
	pid_t pid = fork();
	if (pid == 0) {
		read_file("/mnt/d/f");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	drain("events.child", g, pid);
	/* An ignored mask on the file silences its opens only. */
	RET("events.ignore", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
					   FAN_OPEN, AT_FDCWD, "/mnt/d/f"));
	close(open("/mnt/d/f", O_RDONLY));
	close(open("/mnt/d/g", O_RDONLY));
	drain("events.ignored", g, getpid());
	/* A small buffer is EINVAL, and the event stays. */
	read_file("/mnt/d/g");
	char small[8];
	RET("events.small_read", read(g, small, sizeof small));
	drain("events.after_small", g, getpid());
	/* Removing FAN_EVENT_ON_CHILD leaves the directory's own. */
	RET("events.remove_child", fanotify_mark(g, FAN_MARK_REMOVE, FAN_EVENT_ON_CHILD, AT_FDCWD, "/mnt/d"));
	read_file("/mnt/d/g");
	close(open("/mnt/d", O_RDONLY | O_DIRECTORY));
	drain("events.no_child", g, getpid());
	close(g);

	/* A mount mark hears every file of the mount. */
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	RET("mount.mark", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, "/mnt"));
	read_file("/mnt/d/g");
	drain("mount.events", g, getpid());
	RET("mount.flush", fanotify_mark(g, FAN_MARK_FLUSH | FAN_MARK_MOUNT, 0, AT_FDCWD, NULL));
	read_file("/mnt/d/g");
	drain("mount.flushed", g, getpid());
	close(g);
}

/* The listener's lines, kept until the child that waits on it is done,
 * so that the two processes' lines do not interleave. */
static char said[4096];

static void say(const char *name, long ret) {
	size_t k = strlen(said);
	if (ret == -1)
		snprintf(said + k, sizeof said - k, "%s: -1 %s\n", name, strerrorname_np(errno));
	else
		snprintf(said + k, sizeof said - k, "%s: %ld\n", name, ret);
}

/* answer reads one permission event and writes response for it. */
static void answer(const char *name, int g, pid_t child, unsigned response) {
	struct fanotify_event_metadata ev;
	ssize_t n = read(g, &ev, sizeof ev);
	size_t k = strlen(said);
	snprintf(said + k, sizeof said - k, "%s: read %zd mask %#llx pid %s\n", name, n, (unsigned long long)ev.mask,
		 ev.pid == child ? "ok" : "other");
	struct fanotify_response r = {.fd = ev.fd, .response = response};
	if (response)
		say(name, write(g, &r, sizeof r));
	close(ev.fd);
}

static void permissions(void) {
	int g = fanotify_init(FAN_CLASS_CONTENT, O_RDONLY);
	RET("perm.mark", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_ACCESS_PERM, AT_FDCWD, "/mnt/d/f"));
	int sync[2];
	pipe(sync);
	pid_t pid = fork();
	if (pid == 0) {
		close(g); /* the group goes with the listener's close */
		int fd = open("/mnt/d/f", O_RDONLY);
		SHOW("perm.child_open", "%s", fd >= 0 ? "ok" : strerrorname_np(errno));
		char c;
		RET("perm.child_read_denied", read(fd, &c, 1));
		RET("perm.child_read_allowed", read(fd, &c, 1));
		RET("perm.child_open_denied", open("/mnt/d/f", O_RDONLY));
		write(sync[1], "x", 1);
		RET("perm.child_open_after_close", open("/mnt/d/f", O_RDONLY) >= 0);
		_exit(0);
	}
	answer("perm.open", g, pid, FAN_ALLOW);
	answer("perm.read", g, pid, FAN_DENY);
	answer("perm.read2", g, pid, FAN_ALLOW);
	answer("perm.open2", g, pid, FAN_DENY);
	char x;
	read(sync[0], &x, 1);
	struct fanotify_response bad = {.fd = 999, .response = FAN_ALLOW};
	say("perm.response_no_event", write(g, &bad, sizeof bad));
	bad.fd = -1;
	say("perm.response_bad_fd", write(g, &bad, sizeof bad));
	bad.fd = 0;
	bad.response = 3;
	say("perm.response_bad", write(g, &bad, sizeof bad));
	say("perm.response_short", write(g, &bad, 4));
	/* The last open waits until the group closes unanswered. */
	answer("perm.open3", g, pid, 0);
	close(g);
	waitpid(pid, NULL, 0);
	fputs(said, stdout);
	fflush(stdout);
	close(sync[0]);
	close(sync[1]);
}

static void overflow(void) {
	int lim = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	int unl = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE, O_RDONLY);
	mkdir("/mnt/many", 0755);
	fanotify_mark(lim, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD, "/mnt/many");
	fanotify_mark(unl, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD, "/mnt/many");
	const int files = 16390;
	for (int i = 0; i < files; i++) {
		char name[32];
		snprintf(name, sizeof name, "/mnt/many/%d", i);
		touch(name);
	}
	for (int k = 0; k < 2; k++) {
		int g = k ? unl : lim;
		int count = 0, overflows = 0, nofd = 0;
		struct fanotify_event_metadata ev[64];
		ssize_t n;
		while ((n = read(g, ev, sizeof ev)) > 0) {
			for (int i = 0; i < n / (ssize_t)sizeof ev[0]; i++) {
				count++;
				if (ev[i].mask & FAN_Q_OVERFLOW)
					overflows++;
				if (ev[i].fd == FAN_NOFD)
					nofd++;
				else
					close(ev[i].fd);
			}
		}
		SHOW(k ? "overflow.unlimited" : "overflow.limited", "%d events, %d overflow, %d without fd, then %s",
		     count, overflows, nofd, strerrorname_np(errno));
	}
	close(lim);
	close(unl);
}

/* The limits in /proc/sys/fs/fanotify: a group takes max_queued_events
 * when it is made. */
static void limits(void) {
	show_file("limits.max_queued_events", "/proc/sys/fs/fanotify/max_queued_events");
	show_file("limits.max_user_groups", "/proc/sys/fs/fanotify/max_user_groups");
	put_file("limits.set_queued", "/proc/sys/fs/fanotify/max_queued_events", "3");
	int g = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	put_file("limits.restore_queued", "/proc/sys/fs/fanotify/max_queued_events", "16384");
	fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD, "/mnt/many");
	for (int i = 0; i < 5; i++) {
		char name[32];
		snprintf(name, sizeof name, "/mnt/many/%d", i);
		read_file(name);
	}
	struct fanotify_event_metadata ev[8];
	ssize_t n = read(g, ev, sizeof ev);
	int k = n / (int)sizeof ev[0];
	for (int i = 0; i < k; i++)
		if (ev[i].fd >= 0)
			close(ev[i].fd);
	SHOW("limits.queue_of_3", "%d events, the last %#llx", k, (unsigned long long)ev[k - 1].mask);
	close(g);
}

int main(void) {
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/mnt/d", 0755);
	touch("/mnt/d/f");
	touch("/mnt/d/g");
	init_errors();
	mark_errors();
	events();
	permissions();
	overflow();
	limits();
	return 0;
}
