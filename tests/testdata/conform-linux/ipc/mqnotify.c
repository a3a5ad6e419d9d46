/* mq_notify (qemu-user has none, so compared with Linux itself): its
 * errors, SIGEV_SIGNAL's siginfo (SI_MESGQ, the sender's pid and uid),
 * a registration's one shot, EBUSY for another process, removal by
 * mq_notify(NULL), by closing any of the process's descriptors of the
 * queue and by exit, no notification for a queue that was not empty,
 * glibc's SIGEV_THREAD through a netlink socket, and the descriptor's
 * status line while registered. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static char qname[64];

static int wait_status(pid_t pid) {
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static volatile int thread_calls;
static volatile long thread_value;

static void notified(union sigval v) {
	thread_value = (long)v.sival_ptr;
	thread_calls++;
}

static void notifications(void) {
	mqd_t q = mq_open(qname, O_RDWR | O_NONBLOCK);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_value.sival_int = 0x4321;
	RET("notify.badfd", mq_notify(-1, &ev));
	ev.sigev_notify = 99;
	RET("notify.badnotify", mq_notify(q, &ev));
	RET("notify.badnotify.badfd", mq_notify(-1, &ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = 65;
	RET("notify.badsigno", mq_notify(q, &ev));
	ev.sigev_signo = SIGUSR1;
	RET("notify.bad", syscall(SYS_mq_notify, q, BAD)); /* glibc reads it first */
	RET("notify.unregistered.null", mq_notify(q, NULL));
	RET("notify", mq_notify(q, &ev));
	RET("notify.again", mq_notify(q, &ev));
	pid_t pid = fork();
	if (pid == 0) {
		RET("notify.child.busy", mq_notify(q, &ev));
		RET("notify.child.null", mq_notify(q, NULL));
		_exit(0);
	}
	wait_status(pid);
	char buf[128] = "";
	ssize_t n = read(q, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	/* the line's NOTIFY_PID is the pid: only its start is printed */
	SHOW("read.registered", "%.35s", buf);
	mq_send(q, "a", 1, 0);
	siginfo_t si;
	struct timespec second = {1, 0};
	RET("notify.signal", sigtimedwait(&usr1, &si, &second));
	SHOW("notify.si", "code %d value %#x own pid %d uid %d", si.si_code, si.si_value.sival_int, si.si_pid == getpid(),
	     si.si_uid == getuid());
	RET("notify.oneshot.register", mq_notify(q, &ev));
	mq_send(q, "b", 1, 0); /* not empty before: nothing */
	struct timespec zero = {0, 0};
	RET("notify.not.empty", sigtimedwait(&usr1, &si, &zero));
	char rb[8192];
	mq_receive(q, rb, sizeof rb, NULL);
	mq_receive(q, rb, sizeof rb, NULL);
	RET("notify.unregister", mq_notify(q, NULL));
	mq_send(q, "c", 1, 0);
	RET("notify.unregistered", sigtimedwait(&usr1, &si, &zero));
	mq_receive(q, rb, sizeof rb, NULL);

	/* Closing any of its descriptors drops the process's registration. */
	mqd_t q2 = mq_open(qname, O_RDWR);
	RET("notify.before.close", mq_notify(q2, &ev));
	mq_close(q2);
	pid = fork();
	if (pid == 0)
		_exit(mq_notify(q, &ev) == 0 ? 0 : errno);
	SHOW("notify.child.after.close", "%d", wait_status(pid));
	/* The child's registration ended with it. */
	RET("notify.after.child.exit", mq_notify(q, &ev));
	mq_notify(q, NULL);

	/* glibc's SIGEV_THREAD: a netlink socket carries the cookie. */
	struct sigevent tev;
	memset(&tev, 0, sizeof tev);
	tev.sigev_notify = SIGEV_THREAD;
	tev.sigev_notify_function = notified;
	tev.sigev_value.sival_ptr = (void *)0x5678;
	RET("notify.thread", mq_notify(q, &tev));
	RET("notify.thread.remove", mq_notify(q, NULL));
	RET("notify.thread.again", mq_notify(q, &tev));
	mq_send(q, "d", 1, 0);
	for (int i = 0; i < 200 && !thread_calls; i++) {
		struct timespec nap = {0, 10000000};
		nanosleep(&nap, NULL);
	}
	SHOW("notify.thread.called", "%d %#lx", thread_calls, thread_value);
	mq_close(q);
}

int main(void) {
	snprintf(qname, sizeof qname, "/conform-mqnotify");
	mqd_t q = mq_open(qname, O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
	SHOW("create", "%d", q >= 0);
	notifications();
	mq_close(q);
	RET("unlink", mq_unlink(qname));
	return 0;
}
