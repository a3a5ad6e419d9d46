/* Faults delivered to handlers: SIGSEGV with SEGV_MAPERR and SEGV_ACCERR
 * and si_addr, left with siglongjmp; SIGILL and SIGTRAP; a fault while
 * the signal is blocked or without a handler kills; a handler whose frame
 * cannot be written (alternate stack unmapped) raises SIGSEGV: fatal, or
 * taken by a SIGSEGV handler; a
 * return through a corrupt frame kills with SIGSEGV. */
#include "../conform.h"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

static sigjmp_buf env;
/* low is address 0: a volatile base keeps the compiler from seeing the
 * bad pointers. */
static uintptr_t volatile low;
#define AT(off) (*(volatile int *)(low + (off)))
static volatile int got_sig, got_code;
static void *volatile got_addr;

static void on_fault(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	siglongjmp(env, 1);
}

static void handle(int sig) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
}

/* child_status runs fn in a child and returns how the child ended. */
static void child_status(const char *name, void (*fn)(void)) {
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		fn();
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	SHOW(name, "signaled=%d sig=%d", WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

static void fault_blocked(void) {
	handle(SIGSEGV);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_BLOCK, &set, NULL);
	AT(16) = 1;
}

static void fault_default(void) {
	signal(SIGSEGV, SIG_DFL);
	AT(16) = 1;
}

static void nop(int sig) { (void)sig; }

static void frame_unmapped(void) {
	char *stack = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t ss = {.ss_sp = stack, .ss_size = 65536};
	sigaltstack(&ss, NULL);
	munmap(stack, 65536);
	struct sigaction sa = {0};
	sa.sa_handler = nop;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
}

/* With a SIGSEGV handler, the frame that cannot be written raises
 * SIGSEGV, which the handler takes on the normal stack. */
static void frame_unmapped_handled(void) {
	handle(SIGSEGV);
	got_sig = 0;
	if (sigsetjmp(env, 1) == 0)
		frame_unmapped();
	SHOW("frame.unmapped.handled", "sig=%d code=%d", got_sig, got_code);
}

static void corrupt_return(int sig, siginfo_t *si, void *ucv) {
	(void)sig;
	(void)si;
	(void)ucv;
	/* Point sp at an unmapped page and return into rt_sigreturn. */
	asm volatile("li sp, 8\n ret");
}

static void sigreturn_bad(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = corrupt_return;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
}

int main(void) {
	handle(SIGSEGV);
	if (sigsetjmp(env, 1) == 0)
		AT(8) = 1;
	SHOW("segv.null", "sig=%d code=%d addr=%#lx", got_sig, got_code, (unsigned long)got_addr);

	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	got_sig = 0;
	if (sigsetjmp(env, 1) == 0)
		ro[100] = 1;
	SHOW("segv.readonly", "sig=%d code=%d addr=%d", got_sig, got_code, got_addr == ro + 100);

	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	SHOW("mask.after.longjmp", "%d", sigismember(&cur, SIGSEGV));

	handle(SIGILL);
	got_sig = 0;
	if (sigsetjmp(env, 1) == 0)
		asm volatile(".word 0");
	SHOW("sigill", "sig=%d code=%d", got_sig, got_code);

	handle(SIGTRAP);
	got_sig = 0;
	if (sigsetjmp(env, 1) == 0)
		asm volatile("ebreak");
	SHOW("sigtrap", "sig=%d", got_sig);

	/* The handler survives many faults: each leaves through siglongjmp. */
	volatile int n = 0;
	for (volatile int i = 0; i < 100; i++) {
		if (sigsetjmp(env, 1) == 0)
			AT(8 + i) = 1;
		else
			n++;
	}
	SHOW("segv.repeated", "%d", n);

	child_status("fault.blocked", fault_blocked);
	child_status("fault.default", fault_default);
	child_status("frame.unmapped", frame_unmapped);
	child_status("frame.unmapped.handler", frame_unmapped_handled);
	child_status("sigreturn.bad", sigreturn_bad);
	return 0;
}
