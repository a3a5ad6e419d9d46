/* An atomic memory operation or load-reserved at a misaligned address is
 * SIGBUS (BUS_ADRALN, si_addr the address) as Linux raises it for the
 * address-misaligned exceptions it cannot emulate, not SIGSEGV. */
#include "../conform.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>

static char buf[64] __attribute__((aligned(16)));
static volatile uintptr_t fault_addr;

static void amoadd_w(void)
{
	int r;
	__asm__ volatile("amoadd.w %0, %2, (%1)" : "=r"(r) : "r"(buf + 1), "r"(1) : "memory");
}

static void lr_d(void)
{
	long r;
	__asm__ volatile("lr.d %0, (%1)" : "=r"(r) : "r"(buf + 4) : "memory");
}

static void sc_w(void)
{
	int r;
	__asm__ volatile("sc.w %0, %2, (%1)" : "=r"(r) : "r"(buf + 2), "r"(1) : "memory");
}

static void amoswap_d(void)
{
	long r;
	__asm__ volatile("amoswap.d %0, %2, (%1)" : "=r"(r) : "r"(buf + 12), "r"(1L) : "memory");
}

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	printf("  handler: %s, code %s, offset %ld\n", sigabbrev_np(sig),
	       si->si_code == BUS_ADRALN ? "BUS_ADRALN" : "other", (long)((char *)si->si_addr - buf));
	fflush(stdout);
	_exit(7);
}

/* run runs op in a child, first without a handler, then with one. */
static void run(const char *name, void (*op)(void))
{
	int status;
	printf("%s:\n", name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		op();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		SHOW("  killed by", "%s", sigabbrev_np(WTERMSIG(status)));
	else
		SHOW("  exit", "%d", WEXITSTATUS(status));
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		op();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	SHOW("  with a handler, exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void)
{
	run("amoadd.w", amoadd_w);
	run("lr.d", lr_d);
	run("sc.w", sc_w);
	run("amoswap.d", amoswap_d);
	return 0;
}
