/* sigaltstack: the initial state, SA_ONSTACK handlers run on the
 * alternate stack and see SS_ONSTACK, changing it while on it is EPERM,
 * size and flag checks, handlers without SA_ONSTACK stay on the normal
 * stack, and uc_stack in the frame. */
#include "../conform.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

static char *alt;
static const size_t altsize = 64 * 1024;
static volatile int on_alt, flags_in_handler, change_err, uc_flags, uc_sp_ok;

static void handler(int sig, siginfo_t *si, void *ucv) {
	(void)sig;
	(void)si;
	ucontext_t *uc = ucv;
	char local;
	on_alt = &local >= alt && &local < alt + altsize;
	stack_t cur, ss = {.ss_sp = alt, .ss_size = altsize};
	sigaltstack(NULL, &cur);
	flags_in_handler = cur.ss_flags;
	errno = 0;
	change_err = sigaltstack(&ss, NULL) == -1 ? errno : 0;
	uc_flags = uc->uc_stack.ss_flags;
	uc_sp_ok = uc->uc_stack.ss_sp == alt && uc->uc_stack.ss_size == altsize;
}

int main(void) {
	stack_t ss, old;
	RET("query", sigaltstack(NULL, &old));
	SHOW("initial", "sp=%d flags=%d size=%zu", old.ss_sp == NULL, old.ss_flags, old.ss_size);
	alt = malloc(altsize);
	ss.ss_sp = alt;
	ss.ss_size = 1024;
	ss.ss_flags = 0;
	RET("too.small", sigaltstack(&ss, NULL));
	ss.ss_size = altsize;
	ss.ss_flags = 42;
	RET("bad.flags", sigaltstack(&ss, NULL));
	ss.ss_flags = 0;
	RET("set", sigaltstack(&ss, &old));
	SHOW("set.old", "flags=%d", old.ss_flags);
	sigaltstack(NULL, &old);
	SHOW("set.read", "sp=%d flags=%d size=%d", old.ss_sp == alt, old.ss_flags, old.ss_size == altsize);

	struct sigaction sa = {0};
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	SHOW("onstack", "on_alt=%d flags=%d change=%s", on_alt, flags_in_handler, strerrorname_np(change_err));
	SHOW("onstack.uc_stack", "flags=%d sp=%d", uc_flags, uc_sp_ok);

	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	SHOW("not.onstack", "on_alt=%d flags=%d change=%s", on_alt, flags_in_handler, strerrorname_np(change_err));

	ss.ss_flags = SS_DISABLE;
	RET("disable", sigaltstack(&ss, NULL));
	sigaltstack(NULL, &old);
	SHOW("disabled", "sp=%d flags=%d size=%zu", old.ss_sp == NULL, old.ss_flags, old.ss_size);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	SHOW("onstack.disabled", "on_alt=%d", on_alt);
	RET("efault", sigaltstack((stack_t *)8, NULL));
	return 0;
}
