/* Capabilities, the file-system ids, prctl's settings, personality and
 * unshare as Linux answers them. The host's qemu-user would report the
 * host's (a container's bounding set, its own prctl emulation), so Linux
 * itself is the oracle. Runs as root, then as nobody in children. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static struct __user_cap_header_struct hdr;
static struct __user_cap_data_struct data[2];

static void show_caps(const char *name) {
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	memset(data, 0, sizeof data);
	long r = syscall(SYS_capget, &hdr, data);
	SHOW(name, "%ld eff %x %x perm %x %x inh %x %x", r, data[0].effective, data[1].effective, data[0].permitted,
	     data[1].permitted, data[0].inheritable, data[1].inheritable);
}

static void as_nobody(void) {
	RET("nobody.setuid", setuid(65534));
	show_caps("nobody.caps");
	hdr.pid = 0;
	data[0].permitted = data[0].effective = 1 << CAP_KILL;
	RET("nobody.capset.raise", syscall(SYS_capset, &hdr, data));
	RET("nobody.capbset.drop", prctl(PR_CAPBSET_DROP, CAP_KILL));
	RET("nobody.capbset.read", prctl(PR_CAPBSET_READ, CAP_KILL));
	RET("nobody.setfsuid.0", setfsuid(0));
	RET("nobody.setfsuid.back", setfsuid(-1));
	RET("nobody.setfsgid.0", setfsgid(0));
	RET("nobody.setfsgid.back", setfsgid(-1));
	RET("nobody.unshare.ns", unshare(CLONE_NEWNS));
	RET("nobody.unshare.uts", unshare(CLONE_NEWUTS));
	RET("nobody.unshare.files", unshare(CLONE_FILES));
	RET("nobody.securebits", prctl(PR_SET_SECUREBITS, 0));
}

static void keepcaps(void) {
	RET("keep.set", prctl(PR_SET_KEEPCAPS, 1));
	RET("keep.get", prctl(PR_GET_KEEPCAPS));
	RET("keep.securebits", prctl(PR_GET_SECUREBITS));
	RET("keep.setuid", setresuid(65534, 65534, 65534));
	show_caps("keep.caps");
	RET("keep.bad", prctl(PR_SET_KEEPCAPS, 2));
}

static void fsuid_files(void) {
	/* root with fsuid nobody is refused a root-only file, and the
	 * file-system capabilities leave the effective set */
	RET("fs.setfsuid", setfsuid(65534));
	RET("fs.now", setfsuid(-1));
	show_caps("fs.caps");
	RET("fs.open", open("secret", O_RDONLY));
	RET("fs.create", open("open-dir/new-file", O_CREAT | O_WRONLY, 0600));
	struct stat st;
	stat("open-dir/new-file", &st);
	SHOW("fs.owner", "%u", st.st_uid);
	unlink("open-dir/new-file");
	RET("fs.back", setfsuid(0));
	show_caps("fs.caps.back");
	RET("fs.open.back", open("secret", O_RDONLY) >= 0);
	RET("fs.seteuid", seteuid(1000));
	RET("fs.after.seteuid", setfsuid(-1));
}

static void names(void) {
	char buf[32] = {0};
	RET("name.set", prctl(PR_SET_NAME, "conform-thread-name-long"));
	RET("name.get", prctl(PR_GET_NAME, buf));
	SHOW("name", "%s", buf);
	int fd = open("/proc/self/comm", O_RDONLY);
	memset(buf, 0, sizeof buf);
	read(fd, buf, sizeof buf - 1);
	close(fd);
	SHOW("comm", "%s", buf);
	RET("name.bad", prctl(PR_SET_NAME, BAD));
	RET("name.getbad", prctl(PR_GET_NAME, BAD));
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	int fd = open("secret", O_CREAT | O_WRONLY, 0600);
	close(fd);
	mkdir("open-dir", 0777);
	chmod("open-dir", 0777);
	show_caps("root.caps");
	hdr.version = 0;
	RET("capget.badversion", syscall(SYS_capget, &hdr, data));
	SHOW("capget.version", "%x", hdr.version);
	hdr.version = 0;
	RET("capget.badversion.null", syscall(SYS_capget, &hdr, NULL));
	SHOW("capget.version.null", "%x", hdr.version);
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	RET("capget.null", syscall(SYS_capget, &hdr, NULL));
	RET("capget.badhdr", syscall(SYS_capget, BAD, data));
	RET("capget.baddata", syscall(SYS_capget, &hdr, BAD));
	hdr.pid = -1;
	RET("capget.negpid", syscall(SYS_capget, &hdr, data));
	hdr.pid = 99999;
	RET("capget.nopid", syscall(SYS_capget, &hdr, data));
	hdr.pid = 1;
	RET("capget.init", syscall(SYS_capget, &hdr, data));
	hdr.version = _LINUX_CAPABILITY_VERSION_1;
	hdr.pid = 0;
	memset(data, 0xff, sizeof data);
	RET("capget.v1", syscall(SYS_capget, &hdr, data));
	SHOW("capget.v1.data", "%x %x", data[0].effective, data[1].effective);

	pid_t other = fork();
	if (other == 0) {
		pause();
		_exit(0);
	}
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = other;
	RET("capset.other", syscall(SYS_capset, &hdr, data));
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	hdr.pid = 0;
	hdr.version = 0x12345;
	RET("capset.badversion", syscall(SYS_capset, &hdr, data));
	SHOW("capset.version", "%x", hdr.version);
	RET("capset.baddata", syscall(SYS_capset, &hdr, BAD));

	/* drop to a few capabilities, then try to widen them */
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	memset(data, 0, sizeof data);
	data[0].effective = data[0].permitted = data[0].inheritable =
	    1 << CAP_NET_RAW | 1 << CAP_CHOWN | 1 << CAP_SETPCAP | 1 << CAP_SETUID;
	RET("capset.drop", syscall(SYS_capset, &hdr, data));
	show_caps("dropped");
	RET("capbset.drop.kill", prctl(PR_CAPBSET_DROP, CAP_KILL));
	RET("capbset.read.kill", prctl(PR_CAPBSET_READ, CAP_KILL));
	RET("capbset.read.chown", prctl(PR_CAPBSET_READ, CAP_CHOWN));
	RET("capbset.read.bad", prctl(PR_CAPBSET_READ, 99));
	RET("capbset.drop.bad", prctl(PR_CAPBSET_DROP, 99));
	data[0].effective |= 1 << CAP_KILL;
	RET("capset.eff.notperm", syscall(SYS_capset, &hdr, data));
	data[0].effective &= ~(1 << CAP_KILL);
	data[0].permitted |= 1 << CAP_KILL;
	RET("capset.perm.new", syscall(SYS_capset, &hdr, data));
	data[0].permitted &= ~(1 << CAP_KILL);
	data[0].inheritable |= 1 << CAP_KILL;
	RET("capset.inh.bset", syscall(SYS_capset, &hdr, data));
	data[0].inheritable &= ~(1 << CAP_KILL);
	data[0].effective &= ~(1 << CAP_SETPCAP);
	RET("capset.drop.setpcap", syscall(SYS_capset, &hdr, data));
	RET("capbset.drop.nosetpcap", prctl(PR_CAPBSET_DROP, CAP_CHOWN));
	RET("securebits.nosetpcap", prctl(PR_SET_SECUREBITS, 0));
	data[0].effective |= 1 << CAP_SETPCAP;
	RET("capset.raise.setpcap", syscall(SYS_capset, &hdr, data));
	show_caps("raised");
	RET("ambient.raise", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0));
	RET("ambient.isset", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_CHOWN, 0, 0));
	RET("ambient.raise.notinh", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
	RET("ambient.clear.arg", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0));
	RET("ambient.clear", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
	RET("ambient.isset.after", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_CHOWN, 0, 0));
	RET("ambient.bad", prctl(PR_CAP_AMBIENT, 99, 0, 0, 0));
	/* back to everything is not possible: permitted never grows */
	data[0].effective = data[0].permitted = ~0u;
	RET("capset.all", syscall(SYS_capset, &hdr, data));

	SHOW("keepcaps.status", "%d", run_child(keepcaps));
	SHOW("nobody.status", "%d", run_child(as_nobody));
	SHOW("fsuid.status", "%d", run_child(fsuid_files));
	SHOW("names.status", "%d", run_child(names));

	/* prctl's simple settings */
	int sig = -1;
	RET("pdeathsig.set", prctl(PR_SET_PDEATHSIG, SIGUSR2));
	RET("pdeathsig.get", prctl(PR_GET_PDEATHSIG, &sig));
	SHOW("pdeathsig", "%d", sig);
	RET("pdeathsig.bad", prctl(PR_SET_PDEATHSIG, 65));
	RET("pdeathsig.getbad", prctl(PR_GET_PDEATHSIG, BAD));
	RET("dumpable.get", prctl(PR_GET_DUMPABLE));
	RET("dumpable.set0", prctl(PR_SET_DUMPABLE, 0));
	RET("dumpable.get0", prctl(PR_GET_DUMPABLE));
	RET("dumpable.set2", prctl(PR_SET_DUMPABLE, 2));
	RET("dumpable.set1", prctl(PR_SET_DUMPABLE, 1));
	RET("timerslack.get", prctl(PR_GET_TIMERSLACK));
	RET("timerslack.set", prctl(PR_SET_TIMERSLACK, 70000));
	RET("timerslack.get2", prctl(PR_GET_TIMERSLACK));
	pid_t c = fork();
	if (c == 0) {
		long inherited = prctl(PR_GET_TIMERSLACK);
		prctl(PR_SET_TIMERSLACK, 0);
		SHOW("timerslack.child", "%ld %ld", inherited, (long)prctl(PR_GET_TIMERSLACK));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	RET("timerslack.reset", prctl(PR_SET_TIMERSLACK, 0));
	RET("timerslack.get3", prctl(PR_GET_TIMERSLACK));
	RET("timing.set", prctl(PR_SET_TIMING, 1));
	RET("timing.get", prctl(PR_GET_TIMING));
	RET("nnp.get", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	RET("nnp.set0", prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0));
	RET("nnp.set.arg", prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0));
	RET("nnp.get.arg", prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0));
	RET("nnp.set", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	RET("nnp.get1", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	RET("thp.get", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	RET("thp.set", prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	RET("thp.get1", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	RET("thp.set.arg", prctl(PR_SET_THP_DISABLE, 0, 1, 0, 0));
	RET("thp.get.arg", prctl(PR_GET_THP_DISABLE, 1, 0, 0, 0));
	RET("invalid", prctl(999, 1, 0, 0, 0));

	/* personality */
	RET("persona.query", personality(0xffffffff));
	RET("persona.set", personality(PER_LINUX | STICKY_TIMEOUTS));
	RET("persona.query2", personality(0xffffffff));
	struct timeval tv = {0, 10};
	fd_set rfds;
	FD_ZERO(&rfds);
	RET("select.sticky", select(1, &rfds, NULL, NULL, &tv));
	SHOW("select.sticky.tv", "%ld", (long)tv.tv_usec);
	RET("persona.back", personality(PER_LINUX));
	tv.tv_usec = 10;
	RET("select", select(1, &rfds, NULL, NULL, &tv));
	SHOW("select.tv", "%ld", (long)tv.tv_usec);

	/* unshare */
	RET("unshare.files", unshare(CLONE_FILES));
	RET("unshare.fs", unshare(CLONE_FS));
	RET("unshare.sysvsem", unshare(CLONE_SYSVSEM));
	RET("unshare.thread", unshare(CLONE_THREAD));
	RET("unshare.bad", unshare(-1));
	RET("unshare.settls", unshare(CLONE_SETTLS));
	return 0;
}
