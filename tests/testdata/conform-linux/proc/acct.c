/* acct(2): the privilege and path checks, then one struct acct_v3 record
 * per process that ends while accounting is on, written before its
 * parent can wait for it: flags (AFORK, AXSIG), the version, the exit
 * code as wait reports it, ids, parent, start time, elapsed and CPU
 * times, the command's name (LTP's acct01, acct02). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/acct.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static pid_t run(const char *how) {
	pid_t pid = fork();
	if (pid == 0) {
		if (strcmp(how, "exec") == 0)
			execl("/init", "init", "child", NULL);
		if (strcmp(how, "kill") == 0)
			raise(SIGKILL);
		_exit(3);
	}
	waitpid(pid, NULL, 0);
	return pid;
}

int main(int argc, char **argv) {
	if (argc > 1)
		return 0; /* the exec'd child */
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	mkdir("/dev", 0755);
	mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3));
	close(open("/mnt/plain", O_CREAT | O_WRONLY, 0600));
	symlink("loop2", "/mnt/loop1");
	symlink("loop1", "/mnt/loop2");

	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		RET("nobody", acct("/mnt/plain"));
		RET("nobody.null", acct(NULL));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	RET("dir", acct("/mnt"));
	RET("device", acct("/dev/null"));
	RET("missing", acct("/mnt/no/such"));
	RET("slash", acct("/mnt/plain/"));
	RET("loop", acct("/mnt/loop1"));
	RET("fault", acct((char *)8));
	RET("proc_like", acct("/mnt"));
	RET("off", acct(NULL));

	int fd = open("/mnt/acct", O_CREAT | O_RDWR, 0644);
	RET("on", acct("/mnt/acct"));
	time_t start = time(NULL);
	pid_t pids[3] = {run("exit"), run("exec"), run("kill")};
	RET("off.after", acct(NULL));
	run("exit"); /* not recorded */
	struct acct_v3 r;
	for (int i = 0; read(fd, &r, sizeof r) == sizeof r; i++) {
		char name[32];
		snprintf(name, sizeof name, "record.%d", i);
		printf("%s: flag %#x version %d exit %#x uid %u gid %u pid_ok %d ppid_ok %d btime_ok %d etime_ok %d cpu_ok %d comm %s\n",
		       name, r.ac_flag, r.ac_version, r.ac_exitcode, r.ac_uid, r.ac_gid,
		       i < 3 && r.ac_pid == (unsigned)pids[i], r.ac_ppid == (unsigned)getpid(),
		       (long)r.ac_btime >= (long)start - 5 && (long)r.ac_btime <= (long)time(NULL) + 5,
		       r.ac_etime >= 0 && r.ac_etime < 1000, r.ac_utime < 1000 && r.ac_stime < 1000, r.ac_comm);
	}
	fflush(stdout);
	return 0;
}
