/* kill(2) and rt_sigqueueinfo(2) given the id of a thread other than the
 * main one signal its process, as Linux finds any task's pid;
 * rt_tgsigqueueinfo wants the process's id first (ESRCH otherwise). */
#include "../../conform/conform.h"
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

static volatile int tid, got;
static volatile int done;

static void handler(int sig) { got++; }

static void *thread(void *arg) {
	tid = syscall(SYS_gettid);
	while (!done)
		usleep(1000);
	return arg;
}

int main(void) {
	signal(SIGUSR1, handler);
	pthread_t p;
	pthread_create(&p, NULL, thread, NULL);
	while (!tid)
		usleep(1000);
	RET("kill.thread-id", kill(tid, SIGUSR1));
	siginfo_t si = {.si_code = SI_QUEUE};
	RET("rt_sigqueueinfo.thread-id", syscall(SYS_rt_sigqueueinfo, tid, SIGUSR1, &si));
	RET("rt_tgsigqueueinfo.thread-id-twice", syscall(SYS_rt_tgsigqueueinfo, tid, tid, SIGUSR1, &si));
	RET("rt_tgsigqueueinfo", syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGUSR1, &si));
	done = 1;
	pthread_join(p, NULL);
	SHOW("handled", "%d", got);
	RET("kill.no-such", kill(999999, SIGUSR1));
	return 0;
}
