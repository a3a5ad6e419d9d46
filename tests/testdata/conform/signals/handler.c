/* Handlers: siginfo for kill and tgkill, a handler changing a global and
 * returning through rt_sigreturn with integer and FP registers and fcsr
 * intact, dispositions (SIG_IGN, default-ignored signals, SA_RESETHAND,
 * SA_NODEFER, sa_mask), and rt_sigaction's argument checks. */
#include "../conform.h"
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

static volatile int hits, last_signo, last_code, pid_ok, uid_ok, masked_self;

static void info_handler(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	hits++;
	last_signo = si->si_signo;
	last_code = si->si_code;
	pid_ok = si->si_pid == getpid();
	uid_ok = si->si_uid == getuid();
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	masked_self = sigismember(&cur, sig);
}

/* clobber overwrites caller-saved integer and FP registers and the FP
 * flags, as any handler may. */
static void clobber(int sig) {
	(void)sig;
	hits++;
	asm volatile("li t0, -1\n li t1, -1\n li t2, -1\n li t3, -1\n li t4, -1\n li t5, -1\n li t6, -1\n"
		     "li a3, -1\n li a4, -1\n li a5, -1\n li a6, -1\n"
		     "fmv.d.x ft0, zero\n fmv.d.x ft1, zero\n fmv.d.x ft11, zero\n fmv.d.x fa1, zero\n fmv.d.x fs0, zero\n"
		     "csrwi fflags, 0\n csrwi frm, 3\n"
		     ::: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a3", "a4", "a5", "a6", "ft0", "ft1", "ft11", "fa1", "fs0");
}

/* kill_keeping sends sig to the process from an ECALL surrounded by
 * registers the handler clobbers, and reports which survived. */
static void kill_keeping(int sig) {
	register long a0 asm("a0") = getpid();
	register long a1 asm("a1") = sig;
	register long a7 asm("a7") = SYS_kill;
	long t3, t6, a5;
	double ft0, ft11, fs0;
	unsigned long fflags, frm;
	asm volatile("li t3, 0x1234\n li t6, 0x5678\n li a5, 0x9abc\n"
		     "li t0, 0x3ff8000000000000\n fmv.d.x ft0, t0\n"
		     "li t0, 0x4000000000000000\n fmv.d.x ft11, t0\n"
		     "li t0, 0x4008000000000000\n fmv.d.x fs0, t0\n"
		     "csrwi fflags, 0x5\n csrwi frm, 1\n"
		     "ecall\n"
		     "mv %[t3], t3\n mv %[t6], t6\n mv %[a5], a5\n"
		     "fmv.d %[ft0], ft0\n fmv.d %[ft11], ft11\n fmv.d %[fs0], fs0\n"
		     "csrr %[fflags], fflags\n csrr %[frm], frm\n"
		     : [t3] "=&r"(t3), [t6] "=&r"(t6), [a5] "=&r"(a5), [ft0] "=&f"(ft0), [ft11] "=&f"(ft11), [fs0] "=&f"(fs0),
		       [fflags] "=&r"(fflags), [frm] "=&r"(frm), "+r"(a0)
		     : "r"(a1), "r"(a7)
		     : "t0", "t3", "t6", "a5", "ft0", "ft11", "fs0", "memory");
	SHOW("regs.ret", "%ld", a0);
	SHOW("regs.int", "%lx %lx %lx", t3, t6, a5);
	SHOW("regs.fp", "%g %g %g", ft0, ft11, fs0);
	SHOW("regs.fcsr", "%lx %lx", fflags, frm);
}

int main(void) {
	struct sigaction sa = {0}, old;
	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	RET("sigaction.usr1", sigaction(SIGUSR1, &sa, &old));
	SHOW("sigaction.old.default", "%d", old.sa_handler == SIG_DFL);
	RET("kill.self", kill(getpid(), SIGUSR1));
	SHOW("kill.delivered", "hits=%d signo=%d code=%d pid=%d uid=%d", hits, last_signo, last_code, pid_ok, uid_ok);
	/* sa_mask is blocked in the handler on Linux, but qemu-riscv64 (the
	 * oracle) leaves it out of the mask the handler reads: not printed. */
	SHOW("kill.handler.mask", "self=%d", masked_self);
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	SHOW("mask.restored", "%d %d", sigismember(&cur, SIGUSR1), sigismember(&cur, SIGHUP));
	RET("raise", raise(SIGUSR1));
	SHOW("raise.delivered", "hits=%d signo=%d code=%d", hits, last_signo, last_code);
	RET("tgkill", syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1));
	SHOW("tgkill.code", "%d", last_code);
	RET("tgkill.wrong.tgid", syscall(SYS_tgkill, getpid() + 100000, gettid(), SIGUSR1));
	RET("tkill.zero", syscall(SYS_tkill, 0, SIGUSR1));
	RET("kill.signal0", kill(getpid(), 0));
	RET("kill.badsig", kill(getpid(), 65));
	RET("kill.nosuch", kill(999999, SIGUSR1));

	sigaction(SIGUSR1, NULL, &old);
	SHOW("sigaction.read", "siginfo=%d handler=%d", !!(old.sa_flags & SA_SIGINFO), old.sa_sigaction == info_handler);

	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	SHOW("nodefer.mask", "self=%d", masked_self);

	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGUSR1, &sa, NULL);
	hits = 0;
	raise(SIGUSR1);
	sigaction(SIGUSR1, NULL, &old);
	SHOW("resethand", "hits=%d default=%d", hits, old.sa_handler == SIG_DFL);

	signal(SIGUSR2, SIG_IGN);
	RET("ignored.raise", raise(SIGUSR2));
	RET("default.ignored.chld", raise(SIGCHLD));
	RET("default.ignored.urg", raise(SIGURG));
	RET("default.ignored.winch", raise(SIGWINCH));
	RET("default.ignored.cont", raise(SIGCONT));

	hits = 0;
	signal(SIGUSR2, clobber);
	kill_keeping(SIGUSR2);
	SHOW("clobber.hits", "%d", hits);

	RET("sigaction.kill", sigaction(SIGKILL, &sa, NULL));
	RET("sigaction.stop", sigaction(SIGSTOP, &sa, NULL));
	RET("sigaction.kill.read", sigaction(SIGKILL, NULL, &old));
	RET("sigaction.zero", sigaction(0, &sa, NULL));
	RET("sigaction.65", syscall(SYS_rt_sigaction, 65, NULL, NULL, 8));
	RET("sigaction.setsize", syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 4));
	RET("sigaction.efault", syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, 8));
	return 0;
}
