/* Core dumps with core_pattern "core": a process killed by a signal whose
 * default action dumps core leaves an ELF core file "core" in its working
 * directory (mode 0600, its owner's) when RLIMIT_CORE allows a page; the
 * wait status's core bit and waitid's CLD_DUMPED say so. No dump for
 * SIGTERM, RLIMIT_CORE 0 or under a page, or a process made undumpable;
 * a dump cut short by RLIMIT_CORE leaves its start and no core bit.
 * qemu-riscv64 writes its own cores, so Linux is the oracle. */
#include "../../conform/conform.h"
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void *spin(void *arg) {
	for (;;)
		pause();
	return arg;
}

/* die sets RLIMIT_CORE to limit, then ends by sig (threads: with a second
 * thread running), in directory dir. */
static void die(const char *dir, rlim_t limit, int sig, int threads, int undumpable) {
	mkdir(dir, 0755);
	if (chdir(dir) != 0)
		_exit(90);
	struct rlimit rl = {limit, limit};
	setrlimit(RLIMIT_CORE, &rl);
	if (undumpable)
		prctl(PR_SET_DUMPABLE, 0);
	if (threads) {
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
	}
	char *heap = malloc(100000);
	memset(heap, 7, 100000);
	if (sig == SIGABRT)
		abort();
	if (sig == SIGSEGV)
		*(volatile int *)BAD = 1;
	kill(getpid(), sig);
	pause();
	_exit(91);
}

static void check(const char *name, const char *dir, rlim_t limit, int sig, int threads, int undumpable) {
	pid_t pid = fork();
	if (pid == 0)
		die(dir, limit, sig, threads, undumpable);
	int status;
	waitpid(pid, &status, 0);
	char path[64];
	snprintf(path, sizeof path, "%s/core", dir);
	struct stat st;
	int have = stat(path, &st) == 0;
	printf("%s: signaled %d sig %d core-bit %d file %d", name, WIFSIGNALED(status), WTERMSIG(status),
	       WCOREDUMP(status) != 0, have);
	if (have) {
		Elf64_Ehdr eh = {0};
		int fd = open(path, O_RDONLY);
		read(fd, &eh, sizeof eh);
		int loads = 0, note_first = 0;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			pread(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph);
			loads += ph.p_type == PT_LOAD;
			if (i == 0)
				note_first = ph.p_type == PT_NOTE;
		}
		close(fd);
		printf(" mode %o uid %d elf %d type %d machine %d note-first %d loads %d", st.st_mode & 07777, st.st_uid,
		       memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0, eh.e_type, eh.e_machine, note_first, loads > 3);
	}
	printf("\n");
	fflush(stdout);
}

int main(void) {
	mkdir("cores", 0755);
	chdir("cores");
	check("abort", "abort", RLIM_INFINITY, SIGABRT, 0, 0);
	check("segv", "segv", 1 << 24, SIGSEGV, 0, 0);
	check("quit.threads", "quit", 1 << 24, SIGQUIT, 1, 0);
	check("term", "term", RLIM_INFINITY, SIGTERM, 0, 0);
	check("limit-0", "zero", 0, SIGABRT, 0, 0);
	check("limit-1000", "small", 1000, SIGABRT, 0, 0);
	check("undumpable", "undumpable", RLIM_INFINITY, SIGABRT, 0, 1);
	check("limit-8k", "cut", 8192, SIGABRT, 0, 0);
	/* An old core is replaced. */
	check("again", "abort", RLIM_INFINITY, SIGABRT, 0, 0);

	pid_t pid = fork();
	if (pid == 0)
		die("waitid", RLIM_INFINITY, SIGQUIT, 0, 0);
	siginfo_t si;
	waitid(P_PID, pid, &si, WEXITED);
	SHOW("waitid", "code %d status %d", si.si_code, si.si_status);
	return 0;
}
