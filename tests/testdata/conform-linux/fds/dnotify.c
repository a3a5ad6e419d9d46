/* fcntl(F_NOTIFY): a directory's changes signal the caller with
 * F_SETSIG's signal, si_code POLL_MSG, si_band and si_fd; DN_ATTRIB hears
 * the directory itself and its entries, DN_RENAME only a rename within
 * it, DN_CREATE and DN_DELETE entries made and removed (moves included);
 * without DN_MULTISHOT a mark fires once; a mask without events removes
 * it; a file is ENOTDIR; SIGIO without F_SETSIG (LTP's fcntl38, 39). Also
 * an O_ASYNC pipe's F_SETSIG signal carries si_fd and si_band. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define SIG (SIGRTMIN + 1)

/* take reports the pending SIG records: how many, and the fds. */
static void take(const char *name, int sig) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	/* An O_ASYNC signal may come a moment after the write. */
	struct timespec wait = {0, 200000000};
	siginfo_t si;
	printf("%s:", name);
	int n = 0;
	while (sigtimedwait(&set, &si, &wait) == sig) {
		n++;
		if (sig == SIGIO && si.si_code == SI_KERNEL)
			printf(" kernel");
		else
			printf(" fd%d/code%d/band%#lx", si.si_fd, si.si_code, si.si_band);
	}
	printf(" (%d)\n", n);
	fflush(stdout);
}

static int watch(const char *dir, unsigned long mask, int sig) {
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (sig)
		fcntl(fd, F_SETSIG, sig);
	RET(dir, fcntl(fd, F_NOTIFY, mask));
	return fd;
}

int main(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIG);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	mkdir("/mnt/d", 0700);
	mkdir("/mnt/d/sub", 0700);
	close(open("/mnt/d/file", O_CREAT | O_WRONLY, 0600));

	/* DN_ATTRIB: the entry's change and the directory's own. */
	int parent = watch("/mnt/d", DN_ATTRIB | DN_MULTISHOT, SIG);
	int sub = watch("/mnt/d/sub", DN_ATTRIB | DN_MULTISHOT, SIG);
	SHOW("fds", "%d %d", parent, sub);
	chmod("/mnt/d/sub", 0755);
	take("attrib.sub", SIG);
	chmod("/mnt/d/file", 0644);
	take("attrib.file", SIG);
	close(parent);
	close(sub);

	/* DN_RENAME: only a rename within the directory. */
	parent = watch("/mnt/d", DN_RENAME | DN_MULTISHOT, SIG);
	sub = watch("/mnt/d/sub", DN_RENAME | DN_MULTISHOT, SIG);
	rename("/mnt/d/file", "/mnt/d/sub/file");
	take("rename.across", SIG);
	rename("/mnt/d/sub", "/mnt/d/sub2");
	take("rename.within", SIG);
	rename("/mnt/d/sub2/file", "/mnt/d/sub2/file2");
	take("rename.in_sub", SIG);
	close(parent);
	close(sub);

	/* DN_CREATE and DN_DELETE, once without DN_MULTISHOT. */
	parent = watch("/mnt/d", DN_CREATE, SIG);
	close(open("/mnt/d/a", O_CREAT | O_WRONLY, 0600));
	close(open("/mnt/d/b", O_CREAT | O_WRONLY, 0600));
	take("create.once", SIG);
	RET("again", fcntl(parent, F_NOTIFY, DN_DELETE | DN_MULTISHOT));
	unlink("/mnt/d/a");
	rename("/mnt/d/b", "/mnt/b");
	take("delete", SIG);
	RET("remove", fcntl(parent, F_NOTIFY, DN_MULTISHOT));
	close(open("/mnt/d/c", O_CREAT | O_WRONLY, 0600));
	unlink("/mnt/d/c");
	take("removed", SIG);
	close(parent);

	/* DN_MODIFY and the default signal, SIGIO. */
	int plain = watch("/mnt/d", DN_MODIFY | DN_MULTISHOT, 0);
	int f = open("/mnt/d/sub2/file2", O_WRONLY);
	write(f, "x", 1);
	take("modify.grandchild", SIGIO);
	close(f);
	f = open("/mnt/d/m", O_CREAT | O_WRONLY, 0600);
	write(f, "x", 1);
	take("modify.sigio", SIGIO);
	close(f);
	close(plain);

	RET("not_dir", fcntl(open("/mnt/d/m", O_RDONLY), F_NOTIFY, DN_MODIFY));
	int p[2];
	pipe(p);
	RET("pipe", fcntl(p[0], F_NOTIFY, DN_MODIFY));

	/* O_ASYNC with F_SETSIG: si_fd and si_band too. */
	fcntl(p[0], F_SETOWN, getpid());
	fcntl(p[0], F_SETSIG, SIG);
	fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
	write(p[1], "y", 1);
	take("async.pipe", SIG);
	SHOW("pipe.fd", "%d", p[0]);
	return 0;
}
