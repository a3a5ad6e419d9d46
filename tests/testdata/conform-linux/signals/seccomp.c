/* seccomp: strict mode, filters of classic BPF over struct seccomp_data
 * (the number, the arch, the arguments) and their answers (allow, log,
 * errno, trap with SIGSYS's fields, kill the thread or the process, trace
 * and user notification with nobody listening), the most severe of
 * several filters, inheritance over fork, the checks of a program and of
 * the flags, the privilege a filter needs, PR_GET_SECCOMP, and
 * SECCOMP_GET_ACTION_AVAIL / GET_NOTIF_SIZES (LTP's seccomp01). */
#include "../../conform/conform.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define BRET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static long install(struct sock_filter *f, unsigned short n, unsigned flags) {
	struct sock_fprog prog = {.len = n, .filter = f};
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* when_nr answers ret for system call nr, allows the others. */
static long when_nr(int nr, unsigned ret) {
	struct sock_filter f[] = {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1), BRET(ret), BRET(SECCOMP_RET_ALLOW)};
	return install(f, 4, 0);
}

static void show_status(const char *name, pid_t pid) {
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		SHOW(name, "signal %d", WTERMSIG(status));
	else
		SHOW(name, "exit %d", WEXITSTATUS(status));
}

static volatile int got_code, got_syscall, got_errno;
static volatile unsigned got_arch;
static void on_sigsys(int sig, siginfo_t *si, void *uc) {
	(void)sig, (void)uc;
	got_code = si->si_code;
	got_syscall = si->si_syscall;
	got_arch = si->si_arch;
	got_errno = si->si_errno;
}

static void show_call(const char *name, long r) {
	if (r == -1)
		SHOW(name, "-1 errno %d", errno);
	else
		SHOW(name, "%s", "ok");
}

/* in_child runs body in a child and shows how the child ended. */
#define IN_CHILD(name, ...)                                                    \
	do {                                                                   \
		pid_t pid_ = fork();                                           \
		if (pid_ == 0) {                                               \
			__VA_ARGS__;                                           \
			_exit(0);                                              \
		}                                                              \
		show_status(name, pid_);                                       \
	} while (0)

int main(void) {
	RET("prctl.get", prctl(PR_GET_SECCOMP));
	unsigned actions[] = {SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO,
			      SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW, 0x12340000};
	for (unsigned i = 0; i < sizeof actions / sizeof *actions; i++) {
		char name[32];
		snprintf(name, sizeof name, "avail.%x", actions[i]);
		RET(name, syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &actions[i]));
	}
	RET("avail.flags", syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 1, &actions[0]));
	struct seccomp_notif_sizes sizes = {0};
	RET("notif_sizes", syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes));
	SHOW("notif_sizes.values", "%u %u %u", sizes.seccomp_notif, sizes.seccomp_notif_resp, sizes.seccomp_data);
	RET("bad.op", syscall(SYS_seccomp, 9, 0, NULL));
	RET("strict.flags", syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL));

	/* Programs refused, in a child so that nothing is installed here. */
	IN_CHILD("bad.programs", {
		struct sock_filter ok[] = {BRET(SECCOMP_RET_ALLOW)};
		RET("bad.len0", install(ok, 0, 0));
		static struct sock_filter big[4097];
		for (int i = 0; i < 4097; i++)
			big[i] = (struct sock_filter)BRET(SECCOMP_RET_ALLOW);
		RET("bad.len4097", install(big, 4097, 0));
		struct sock_filter jump[] = {BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.jump", install(jump, 2, 0));
		struct sock_filter cond[] = {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 3, 0), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.cond", install(cond, 3, 0));
		struct sock_filter off[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.offset", install(off, 2, 0));
		struct sock_filter align[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.align", install(align, 2, 0));
		struct sock_filter half[] = {BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.half", install(half, 2, 0));
		struct sock_filter last[] = {LD_NR};
		RET("bad.last", install(last, 1, 0));
		struct sock_filter div0[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.div0", install(div0, 2, 0));
		struct sock_filter mem[] = {BPF_STMT(BPF_LD | BPF_MEM, 3), BRET(SECCOMP_RET_ALLOW)};
		RET("bad.mem", install(mem, 2, 0));
		struct sock_filter retx[] = {BPF_STMT(BPF_RET | BPF_X, 0)};
		RET("bad.retx", install(retx, 1, 0));
		RET("bad.flags", install(ok, 1, 0x40));
		RET("bad.fault", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)8));
		RET("prctl.bad.mode", prctl(PR_SET_SECCOMP, 7, 0, 0, 0));
		RET("prctl.get.after", prctl(PR_GET_SECCOMP));
	});

	IN_CHILD("unprivileged", {
		setuid(65534);
		struct sock_filter ok[] = {BRET(SECCOMP_RET_ALLOW)};
		RET("unprivileged.filter", install(ok, 1, 0));
		RET("unprivileged.nnp", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
		RET("unprivileged.filter.nnp", install(ok, 1, 0));
	});

	IN_CHILD("strict", {
		RET("strict.set", prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT));
		write(1, "strict.write: ok\n", 17);
		syscall(SYS_getpid);
		write(1, "strict.survived\n", 16);
	});

	IN_CHILD("errno", {
		RET("errno.install", when_nr(SYS_getpid, SECCOMP_RET_ERRNO | 1));
		show_call("errno.getpid", syscall(SYS_getpid));
		RET("errno.get", prctl(PR_GET_SECCOMP));
		RET("errno.strict.after.filter", prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT));
		when_nr(SYS_getppid, SECCOMP_RET_ERRNO | 5000);
		show_call("errno.capped", syscall(SYS_getppid));
		/* The most severe answer of the two filters wins. */
		when_nr(SYS_getuid, SECCOMP_RET_LOG);
		when_nr(SYS_getuid, SECCOMP_RET_ERRNO | 13);
		when_nr(SYS_getuid, SECCOMP_RET_ALLOW);
		show_call("errno.precedence", syscall(SYS_getuid));
		show_call("errno.log", syscall(SYS_getgid));
		pid_t pid = fork();
		if (pid == 0) {
			show_call("errno.inherited", syscall(SYS_getpid));
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	});

	IN_CHILD("args", {
		struct sock_filter f[] = {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_dup, 0, 3),
					  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
					  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 99, 0, 1), BRET(SECCOMP_RET_ERRNO | 9),
					  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
					  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_RISCV64, 1, 0),
					  BRET(SECCOMP_RET_KILL_PROCESS), BRET(SECCOMP_RET_ALLOW)};
		RET("args.install", install(f, sizeof f / sizeof *f, SECCOMP_FILTER_FLAG_TSYNC));
		show_call("args.dup99", syscall(SYS_dup, 99));
		show_call("args.dup0", syscall(SYS_dup, 0));
	});

	IN_CHILD("trap", {
		struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
		sigaction(SIGSYS, &sa, NULL);
		when_nr(SYS_getppid, SECCOMP_RET_TRAP | 42);
		show_call("trap.call", syscall(SYS_getppid));
		SHOW("trap.info", "code %d syscall %d arch %x errno %d", got_code, got_syscall, got_arch, got_errno);
		when_nr(SYS_getuid, SECCOMP_RET_TRACE);
		show_call("trace.call", syscall(SYS_getuid));
		when_nr(SYS_getgid, SECCOMP_RET_USER_NOTIF);
		show_call("user_notif.call", syscall(SYS_getgid));
	});

	IN_CHILD("kill.process", {
		when_nr(SYS_getpid, SECCOMP_RET_KILL_PROCESS);
		syscall(SYS_getpid);
		write(1, "kill.process.survived\n", 22);
	});
	IN_CHILD("kill.thread", {
		when_nr(SYS_getpid, SECCOMP_RET_KILL_THREAD);
		syscall(SYS_getpid);
		write(1, "kill.thread.survived\n", 21);
	});
	IN_CHILD("trap.default", {
		when_nr(SYS_getpid, SECCOMP_RET_TRAP);
		syscall(SYS_getpid);
		write(1, "trap.default.survived\n", 22);
	});
	return 0;
}
