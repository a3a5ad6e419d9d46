/* syslog(2) over the kernel's log: its records ("<level>[seconds] text"),
 * READ_ALL keeping only whole records, READ consuming what it returns,
 * CLEAR, the console levels as /proc/sys/kernel/printk shows them,
 * dmesg_restrict, and the errors LTP's syslog11 and syslog12 check; then
 * vhangup(2), and the /proc/sys settings root writes: the host and domain
 * names, inotify's max_user_instances (LTP's inotify06, splice06). */
#include "../../conform/conform.h"
#include <regex.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* records_ok says whether every line of b[0:n] is a whole record. */
static int records_ok(const char *b, int n) {
	regex_t re;
	regcomp(&re, "^<[0-9]+>\\[ *[0-9]+\\.[0-9]{6}\\] ", REG_EXTENDED);
	int ok = n > 0 && b[n - 1] == '\n';
	for (int i = 0; ok && i < n;) {
		char line[4096];
		int len = strcspn(b + i, "\n");
		snprintf(line, sizeof line, "%.*s", len, b + i);
		ok = regexec(&re, line, 0, NULL, 0) == 0;
		i += len + 1;
	}
	regfree(&re);
	return ok;
}

static char buf[1 << 20];

/* as_nobody runs the syslog action in a child without privilege. */
static void as_nobody(const char *name, int action, int len) {
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		errno = 0;
		int r = klogctl(action, buf, len);
		printf("%s: %d errno %s\n", name, r < 0 ? -1 : 0, strerrorname_np(errno));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);

	int size = klogctl(10, NULL, 0);
	SHOW("size_buffer.power_of_two", "%d", size >= 4096 && (size & (size - 1)) == 0);
	int unread = klogctl(9, NULL, 0);
	SHOW("size_unread.positive", "%d", unread > 0);
	int n = klogctl(3, buf, sizeof buf);
	SHOW("read_all.records", "%d", records_ok(buf, n));
	SHOW("read_all.holds_unread", "%d", n >= unread);
	int small = klogctl(3, buf, 8);
	SHOW("read_all.8_bytes", "%d", small);
	int tail = klogctl(3, buf, 300);
	SHOW("read_all.300.records", "%d", tail == 0 || records_ok(buf, tail));
	SHOW("read_all.300.fits", "%d", tail <= 300);

	/* A record longer than the buffer is read in parts. */
	RET("read.10", klogctl(2, buf, 10));
	SHOW("read.10.prefix", "%d", buf[0] == '<');
	SHOW("read.consumed.10", "%d", klogctl(9, NULL, 0) == unread - 10);
	n = klogctl(2, buf, 200);
	SHOW("read.200.fits", "%d", n > 0 && n <= 200);
	int left = klogctl(9, NULL, 0);
	SHOW("read.consumed", "%d", left == unread - 10 - n);
	n = klogctl(2, buf, sizeof buf);
	SHOW("read.rest", "%d", n == left && buf[n - 1] == '\n');
	SHOW("read.then_unread", "%d", klogctl(9, NULL, 0));
	RET("read.len0", klogctl(2, buf, 0));
	RET("read.null", klogctl(2, NULL, 10));
	RET("read.negative", klogctl(2, buf, -1));
	RET("read_all.negative", klogctl(3, buf, -1));
	RET("read_all.null", klogctl(3, NULL, 10));
	RET("bad_action", klogctl(100, buf, 0));
	RET("close", klogctl(0, NULL, 0));
	RET("open", klogctl(1, NULL, 0));

	RET("level.0", klogctl(8, NULL, 0));
	RET("level.9", klogctl(8, NULL, 9));
	RET("level.3", klogctl(8, NULL, 3));
	show_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk");
	RET("console_off", klogctl(6, NULL, 0));
	show_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk");
	RET("console_off.again", klogctl(6, NULL, 0));
	RET("console_on", klogctl(7, NULL, 0));
	show_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk");
	put_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk", "5");
	show_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk");
	put_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk", "1 4 1 7\n");
	show_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk");
	put_file("/proc/sys/kernel/printk", "/proc/sys/kernel/printk", "x");

	RET("clear", klogctl(5, NULL, 0));
	RET("read_all.after_clear", klogctl(3, buf, sizeof buf));
	SHOW("size_unread.after_clear", "%d", klogctl(9, NULL, 0));

	show_file("/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/dmesg_restrict");
	as_nobody("nobody.read", 2, 10);
	as_nobody("nobody.read_all", 3, 10);
	as_nobody("nobody.size_buffer", 10, 0);
	put_file("/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/dmesg_restrict", "0");
	as_nobody("nobody.open.read_all", 3, 10);
	as_nobody("nobody.open.size_buffer", 10, 0);
	as_nobody("nobody.open.read", 2, 10);
	put_file("/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/dmesg_restrict", "2");
	put_file("/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/dmesg_restrict", "1");
	show_file("/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/dmesg_restrict");

	/* vhangup: privileged, and a no-op without a controlling terminal. */
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		RET("vhangup.no_tty", vhangup());
		setuid(65534);
		RET("vhangup.nobody", vhangup());
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* The names, set through /proc/sys/kernel. */
	struct utsname u;
	put_file("/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname", "conform-host\n");
	uname(&u);
	SHOW("uname.nodename", "%s", u.nodename);
	show_file("/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname");
	put_file("/proc/sys/kernel/domainname", "/proc/sys/kernel/domainname", "example.test");
	uname(&u);
	SHOW("uname.domainname", "%s", u.domainname);
	char longname[80];
	memset(longname, 'h', 70);
	longname[70] = 0;
	put_file("/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname", longname);
	uname(&u);
	SHOW("uname.nodename.long", "%zu", strlen(u.nodename));
	put_file("/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname", "one\ntwo");
	show_file("/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname");

	/* inotify's instances per user, as root sets their bound. */
	show_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances");
	put_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances", "1");
	show_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances");
	int first = inotify_init1(0);
	SHOW("inotify.first", "%d", first >= 0);
	RET("inotify.second", inotify_init1(0));
	close(first);
	RET("inotify.after_close", inotify_init1(0) >= 0 ? 0 : -1);
	put_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances", "-1");
	put_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances", "abc");
	put_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances", "128");
	show_file("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/fs/inotify/max_user_instances");
	put_file("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/fs/inotify/max_user_watches", "2");
	show_file("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/fs/inotify/max_user_watches");
	int in = inotify_init1(0);
	RET("watch.1", inotify_add_watch(in, "/", IN_CREATE) > 0 ? 0 : -1);
	RET("watch.2", inotify_add_watch(in, "/proc", IN_CREATE) > 0 ? 0 : -1);
	RET("watch.3", inotify_add_watch(in, "/proc/self", IN_CREATE));
	return 0;
}
