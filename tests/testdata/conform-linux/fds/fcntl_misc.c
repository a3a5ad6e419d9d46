/* fcntl's descriptor commands beyond locks: F_CREATED_QUERY, the I/O
 * signal owner (F_SETOWN, F_SETOWN_EX) and signal (F_SETSIG) with O_ASYNC
 * delivery on a pipe, and leases (F_SETLEASE, F_GETLEASE). Checked
 * against Linux: qemu-user does not know F_CREATED_QUERY. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#ifndef F_CREATED_QUERY
#define F_CREATED_QUERY (1024 + 4)
#endif

static const char *signame(int sig) { return sig > 0 ? sigabbrev_np(sig) : strerrorname_np(errno); }

/* io_signal writes to a pipe whose read end is O_ASYNC and reports the
 * signal that came (or the timeout). */
static void io_signal(const char *name, int rd, int wr) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	sigaddset(&set, SIGUSR1);
	write(wr, "x", 1);
	siginfo_t si;
	struct timespec timeout = {1, 0};
	int sig = sigtimedwait(&set, &si, &timeout);
	SHOW(name, "%s code %d", signame(sig), sig == SIGUSR1 ? si.si_code : 0);
	char c;
	read(rd, &c, 1);
}

int main(void) {
	int fd = open("fcntl-created", O_CREAT | O_RDWR | O_EXCL, 0644);
	RET("created.new", fcntl(fd, F_CREATED_QUERY, 0));
	close(fd);
	fd = open("fcntl-created", O_CREAT | O_RDWR, 0644);
	RET("created.existing.ocreat", fcntl(fd, F_CREATED_QUERY, 0));
	close(fd);
	int p[2];
	pipe(p);
	RET("created.pipe", fcntl(p[0], F_CREATED_QUERY, 0));
	RET("getown.default", fcntl(p[0], F_GETOWN));
	RET("getsig.default", fcntl(p[0], F_GETSIG));
	struct f_owner_ex ex;
	RET("getown_ex.default", fcntl(p[0], F_GETOWN_EX, &ex));
	SHOW("getown_ex.default.value", "type %d pid %d", ex.type, ex.pid);
	RET("setown.self", fcntl(p[0], F_SETOWN, getpid()));
	RET("getown.self", fcntl(p[0], F_GETOWN) == getpid());
	RET("setown.nobody", fcntl(p[0], F_SETOWN, 99999));
	RET("setown.group", fcntl(p[0], F_SETOWN, -getpgrp()));
	RET("getown.group", fcntl(p[0], F_GETOWN) == -getpgrp());
	RET("getown_ex.group", fcntl(p[0], F_GETOWN_EX, &ex));
	SHOW("getown_ex.group.value", "type %d is-group %d", ex.type, ex.pid == getpgrp());
	ex.type = 7;
	RET("setown_ex.badtype", fcntl(p[0], F_SETOWN_EX, &ex));
	RET("setown_ex.badptr", fcntl(p[0], F_SETOWN_EX, BAD));
	RET("setsig.bad", fcntl(p[0], F_SETSIG, 65));

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	RET("setown.self.again", fcntl(p[0], F_SETOWN, getpid()));
	RET("setfl.async", fcntl(p[0], F_SETFL, O_ASYNC));
	RET("getfl.async", (fcntl(p[0], F_GETFL) & O_ASYNC) != 0);
	io_signal("async.default.signal", p[0], p[1]);
	RET("setsig.usr1", fcntl(p[0], F_SETSIG, SIGUSR1));
	RET("getsig.usr1", fcntl(p[0], F_GETSIG));
	io_signal("async.setsig", p[0], p[1]);
	ex.type = F_OWNER_TID;
	ex.pid = gettid();
	RET("setown_ex.tid", fcntl(p[0], F_SETOWN_EX, &ex));
	io_signal("async.tid", p[0], p[1]);
	RET("setfl.sync", fcntl(p[0], F_SETFL, 0));
	io_signal("sync.nothing", p[0], p[1]);

	/* Leases. */
	int ro = open("fcntl-created", O_RDONLY);
	RET("getlease.none", fcntl(ro, F_GETLEASE));
	RET("setlease.read", fcntl(ro, F_SETLEASE, F_RDLCK));
	RET("getlease.read", fcntl(ro, F_GETLEASE));
	RET("setlease.bad", fcntl(ro, F_SETLEASE, 5));
	RET("setlease.unlock", fcntl(ro, F_SETLEASE, F_UNLCK));
	RET("getlease.unlocked", fcntl(ro, F_GETLEASE));
	RET("setlease.write.readonly.alone", fcntl(ro, F_SETLEASE, F_WRLCK));
	RET("getlease.write", fcntl(ro, F_GETLEASE));
	RET("setlease.unlock.write", fcntl(ro, F_SETLEASE, F_UNLCK));
	int rw = open("fcntl-created", O_RDWR);
	RET("setlease.read.open.for.write", fcntl(ro, F_SETLEASE, F_RDLCK));
	RET("setlease.read.on.writable", fcntl(rw, F_SETLEASE, F_RDLCK));
	RET("setlease.write.other.open", fcntl(rw, F_SETLEASE, F_WRLCK));
	close(ro);
	RET("setlease.write.alone", fcntl(rw, F_SETLEASE, F_WRLCK));
	RET("getlease.write.rw", fcntl(rw, F_GETLEASE));
	RET("setlease.unlock.rw", fcntl(rw, F_SETLEASE, F_UNLCK));
	RET("setlease.pipe", fcntl(p[0], F_SETLEASE, F_RDLCK));
	close(rw);
	RET("setlease.dir", fcntl(open(".", O_RDONLY), F_SETLEASE, F_RDLCK));
	unlink("fcntl-created");
	return 0;
}
