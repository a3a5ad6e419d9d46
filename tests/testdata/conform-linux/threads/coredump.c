/* Core dumps with core_pattern "core": a process killed by a signal whose
 * default action dumps core leaves an ELF core file "core" in its working
 * directory (mode 0600, its owner's) when RLIMIT_CORE allows a page; the
 * wait status's core bit and waitid's CLD_DUMPED say so. No dump for
 * SIGTERM, RLIMIT_CORE 0 or under a page, or a process made undumpable;
 * a dump cut short by RLIMIT_CORE still sets the core bit. core_pattern
 * names the file; /proc/PID/coredump_filter and MADV_DONTDUMP choose what
 * it holds.
 * qemu-riscv64 writes its own cores, so Linux is the oracle. */
#include "../../conform/conform.h"
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char *marked;

/* mark writes the marker, made at run time so that no copy of it is in
 * the program's file (whose first page a core holds). */
static void mark(char *to) {
	for (int i = 0; i < 64; i++)
		to[i] = 'A' + (i * 7 + 3) % 26;
}

/* has_marker reports whether file holds the marker, page-aligned as the
 * child wrote it at the start of a page. */
static int has_marker(const char *file) {
	char want[64], page[4096];
	mark(want);
	int fd = open(file, O_RDONLY), found = 0;
	while (!found && read(fd, page, sizeof page) == sizeof page)
		found = memcmp(page, want, sizeof want) == 0;
	close(fd);
	return found;
}

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
	mark(marked);
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
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	marked = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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

	SHOW("marker.kept", "%d", has_marker("abort/core"));

	pid_t pid = fork();
	if (pid == 0)
		die("waitid", RLIM_INFINITY, SIGQUIT, 0, 0);
	siginfo_t si;
	waitid(P_PID, pid, &si, WEXITED);
	SHOW("waitid", "code %d status %d", si.si_code, si.si_status);

	madvise(marked, 4096, MADV_DONTDUMP);
	check("dontdump", "dontdump", RLIM_INFINITY, SIGABRT, 0, 0);
	SHOW("marker.dontdump", "%d", has_marker("dontdump/core"));
	madvise(marked, 4096, MADV_DODUMP);

	show_file("filter", "/proc/self/coredump_filter");
	put_file("filter.write-0x32", "/proc/self/coredump_filter", "0x32\n");
	show_file("filter.after", "/proc/self/coredump_filter");
	check("no-anon-private", "noanon", RLIM_INFINITY, SIGABRT, 0, 0);
	SHOW("marker.no-anon-private", "%d", has_marker("noanon/core"));
	put_file("filter.write-big", "/proc/self/coredump_filter", "0x7fff");
	show_file("filter.big", "/proc/self/coredump_filter");
	put_file("filter.write-garbage", "/proc/self/coredump_filter", "zz");
	put_file("filter.write-back", "/proc/self/coredump_filter", "51");
	show_file("filter.back", "/proc/self/coredump_filter");

	show_file("pattern", "/proc/sys/kernel/core_pattern");
	put_file("pattern.write", "/proc/sys/kernel/core_pattern", "dump-%s-%%-%c\n");
	show_file("pattern.after", "/proc/sys/kernel/core_pattern");
	check("pattern.core", "pattern", RLIM_INFINITY, SIGABRT, 0, 0);
	struct stat st;
	SHOW("pattern.file", "%d", stat("pattern/dump-6-%-18446744073709551615", &st) == 0);
	char cwd[256], abs[300];
	getcwd(cwd, sizeof cwd);
	snprintf(abs, sizeof abs, "%s/absolute-%%s", cwd);
	put_file("pattern.absolute", "/proc/sys/kernel/core_pattern", abs);
	check("pattern.absolute.core", "elsewhere", RLIM_INFINITY, SIGABRT, 0, 0);
	SHOW("pattern.absolute.file", "%d", stat("absolute-6", &st) == 0);
	put_file("pattern.pipe", "/proc/sys/kernel/core_pattern", "|/nonexistent");
	check("pattern.pipe.core", "piped", RLIM_INFINITY, SIGABRT, 0, 0);
	put_file("pattern.restore", "/proc/sys/kernel/core_pattern", "core");
	return 0;
}
