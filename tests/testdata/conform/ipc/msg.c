/* System V message queues: msgget's keys and flags, msgsnd and msgrcv with
 * types, MSG_EXCEPT, MSG_NOERROR, MSG_COPY and IPC_NOWAIT, a full queue,
 * msgctl's IPC_STAT, IPC_SET and IPC_RMID, permissions of another user,
 * a receiver blocked until a message comes, interrupted by a signal
 * (EINTR) and woken by the queue's removal (EIDRM), and faulting
 * pointers. Ids and keys differ between kernels and are never printed. */
#include "../conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>

struct msg {
	long type;
	char text[64];
};

static int child_status(pid_t pid) {
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void on_alarm(int sig) { (void)sig; }

/* sysvipc prints the fields of /proc/sysvipc/msg's line for key that do
 * not depend on the kernel's ids, pids and clock. */
static void sysvipc(const char *name, key_t key) {
	FILE *f = fopen("/proc/sysvipc/msg", "r");
	char line[512];
	int found = 0;
	fgets(line, sizeof line, f);
	SHOW(name, "header %s", strtok(line, "\n"));
	while (fgets(line, sizeof line, f)) {
		int k, id;
		unsigned perms, lspid, lrpid, uid, gid, cuid, cgid;
		unsigned long cbytes, qnum;
		if (sscanf(line, "%d %d %o %lu %lu %u %u %u %u %u %u", &k, &id, &perms, &cbytes, &qnum, &lspid, &lrpid,
			   &uid, &gid, &cuid, &cgid) == 11 &&
		    k == key) {
			SHOW(name, "perms %o cbytes %lu qnum %lu lspid is me %d lrpid %u uid %u cuid %u", perms, cbytes,
			     qnum, lspid == (unsigned)getpid(), lrpid, uid, cuid);
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		SHOW(name, "%s", "not listed");
}

static void send(int id, long type, const char *text) {
	struct msg m = {.type = type};
	strcpy(m.text, text);
	RET(text, msgsnd(id, &m, strlen(text) + 1, 0));
}

static void receive(const char *name, int id, size_t size, long type, int flags) {
	struct msg m = {0};
	errno = 0;
	long n = msgrcv(id, &m, size, type, flags);
	if (n < 0)
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
	else
		printf("%s: %ld type %ld %.*s\n", name, n, m.type, (int)n, m.text);
	fflush(stdout);
}

int main(void) {
	key_t key = 0x4a100000 | (getpid() & 0xffff);
	int id = msgget(key, IPC_CREAT | IPC_EXCL | 0640);
	SHOW("msgget create", "%s", id >= 0 ? "ok" : strerrorname_np(errno));
	RET("msgget same key", msgget(key, 0) == id ? 0 : -2);
	RET("msgget excl", msgget(key, IPC_CREAT | IPC_EXCL | 0600));
	RET("msgget missing", msgget(key + 1, 0600));
	RET("msgget more mode than granted (root)", msgget(key, 0777) == id ? 0 : -2);

	struct msqid_ds ds;
	RET("IPC_STAT", msgctl(id, IPC_STAT, &ds));
	SHOW("stat", "mode %o qnum %lu cbytes %lu qbytes %lu uid %u cuid %u", ds.msg_perm.mode & 0777,
	     ds.msg_qnum, ds.__msg_cbytes, ds.msg_qbytes, ds.msg_perm.uid, ds.msg_perm.cuid);
	SHOW("stat times", "stime %ld rtime %ld ctime set %d", (long)ds.msg_stime, (long)ds.msg_rtime,
	     ds.msg_ctime != 0);

	send(id, 5, "five");
	send(id, 2, "two");
	send(id, 7, "seven");
	send(id, 2, "two again");
	sysvipc("sysvipc", key);
	RET("IPC_STAT", msgctl(id, IPC_STAT, &ds));
	SHOW("stat after sends", "qnum %lu cbytes %lu lspid is me %d stime set %d", ds.msg_qnum, ds.__msg_cbytes,
	     ds.msg_lspid == getpid(), ds.msg_stime != 0);
	receive("rcv MSG_COPY 1", id, 64, 1, MSG_COPY | IPC_NOWAIT);
	receive("rcv MSG_COPY 9", id, 64, 9, MSG_COPY | IPC_NOWAIT);
	receive("rcv MSG_COPY without IPC_NOWAIT", id, 64, 0, MSG_COPY);
	receive("rcv MSG_COPY small", id, 2, 0, MSG_COPY | IPC_NOWAIT);
	receive("rcv MSG_COPY small NOERROR", id, 2, 0, MSG_COPY | IPC_NOWAIT | MSG_NOERROR);
	receive("rcv type 2", id, 64, 2, 0);
	receive("rcv type -6", id, 64, -6, 0);
	receive("rcv except 7", id, 64, 7, MSG_EXCEPT);
	receive("rcv too small", id, 3, 0, 0);
	receive("rcv NOERROR", id, 3, 0, MSG_NOERROR);
	receive("rcv empty nowait", id, 64, 0, IPC_NOWAIT);
	receive("rcv negative size", id, -1, 0, IPC_NOWAIT);
	receive("rcv bad id", -1, 64, 0, IPC_NOWAIT);
	RET("IPC_STAT", msgctl(id, IPC_STAT, &ds));
	/* msg_lrpid is not compared: qemu-riscv64 stores msg_lspid as a
	 * long over it. */
	SHOW("stat after receives", "qnum %lu cbytes %lu rtime set %d", ds.msg_qnum, ds.__msg_cbytes,
	     ds.msg_rtime != 0);

	struct msg m = {.type = 0};
	RET("snd type 0", msgsnd(id, &m, 1, 0));
	/* qemu-riscv64 reads the whole text before the kernel checks the
	 * size: the buffer is large enough for it. */
	static struct {
		long type;
		char text[8200];
	} big = {.type = 1};
	RET("snd too big", msgsnd(id, &big, 8193, 0));
	m.type = 1;
	RET("snd bad pointer", msgsnd(id, BAD, 1, 0));
	RET("snd bad id", msgsnd(-1, &m, 1, 0));
	RET("snd zero bytes", msgsnd(id, &m, 0, 0));
	receive("rcv zero bytes", id, 64, 0, IPC_NOWAIT);

	/* A queue of 10 bytes takes one 8-byte message, not a second. */
	ds.msg_qbytes = 10;
	RET("IPC_SET qbytes 10", msgctl(id, IPC_SET, &ds));
	RET("snd 8", msgsnd(id, &m, 8, IPC_NOWAIT));
	RET("snd 8 full", msgsnd(id, &m, 8, IPC_NOWAIT));
	RET("IPC_STAT", msgctl(id, IPC_STAT, &ds));
	SHOW("stat full", "qnum %lu cbytes %lu qbytes %lu", ds.msg_qnum, ds.__msg_cbytes, ds.msg_qbytes);

	/* A sender blocked on the full queue goes on once a message leaves. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(msgsnd(id, &m, 8, 0) == 0 ? 0 : errno);
	usleep(100000);
	receive("rcv to make room", id, 64, 0, 0);
	SHOW("blocked sender", "%d", child_status(pid));
	receive("rcv its message", id, 64, 0, IPC_NOWAIT);

	/* A receiver blocked on the empty queue gets the message sent later. */
	pid = fork();
	if (pid == 0) {
		struct msg r;
		long n = msgrcv(id, &r, sizeof r.text, 3, 0);
		_exit(n == 4 && strcmp(r.text, "hey") == 0 ? 0 : 1);
	}
	usleep(100000);
	send(id, 1, "one");
	send(id, 3, "hey");
	SHOW("blocked receiver", "%d", child_status(pid));
	receive("rcv the other", id, 64, 0, IPC_NOWAIT);

	/* A signal with a handler interrupts a blocked receive: EINTR even
	 * with SA_RESTART. */
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	receive("rcv interrupted (SA_RESTART)", id, 64, 0, 0);

	/* Another user: mode 0640 lets neither read nor write. */
	ds.msg_perm.mode = 0640;
	ds.msg_qbytes = 16384;
	RET("IPC_SET mode 0640", msgctl(id, IPC_SET, &ds));
	pid = fork();
	if (pid == 0) {
		setresgid(1000, 1000, 1000);
		setresuid(1000, 1000, 1000);
		struct msqid_ds d;
		RET("other: IPC_STAT", msgctl(id, IPC_STAT, &d));
		RET("other: msgsnd", msgsnd(id, &m, 1, IPC_NOWAIT));
		RET("other: msgrcv", msgrcv(id, &m, 8, 0, IPC_NOWAIT));
		RET("other: msgget", msgget(key, 0) == id ? 0 : -2);
		RET("other: msgget read", msgget(key, 0400));
		RET("other: IPC_SET", msgctl(id, IPC_SET, &d));
		RET("other: IPC_RMID", msgctl(id, IPC_RMID, NULL));
		_exit(0);
	}
	child_status(pid);
	ds.msg_qbytes = 20000;
	pid = fork();
	if (pid == 0) {
		setresuid(0, 1000, 0);
		RET("non-root: IPC_SET qbytes past msgmnb", msgctl(id, IPC_SET, &ds));
		_exit(0);
	}
	/* Root may (CAP_SYS_RESOURCE), which the host's root lacks. */
	child_status(pid);
	RET("IPC_STAT bad buffer", msgctl(id, IPC_STAT, BAD));
	RET("IPC_SET bad buffer", msgctl(id, IPC_SET, BAD));
	RET("bad command", msgctl(id, 99, &ds));

	/* Removal wakes a blocked receiver with EIDRM. */
	pid = fork();
	if (pid == 0)
		_exit(msgrcv(id, &m, 8, 42, 0) < 0 ? errno : 0);
	usleep(100000);
	RET("IPC_RMID", msgctl(id, IPC_RMID, NULL));
	SHOW("blocked receiver after IPC_RMID", "%s", strerrorname_np(child_status(pid)));
	RET("IPC_STAT removed", msgctl(id, IPC_STAT, &ds));
	RET("msgget removed key", msgget(key, 0));
	sysvipc("sysvipc after IPC_RMID", key);

	struct msginfo info;
	RET("IPC_INFO >= 0", msgctl(0, IPC_INFO, (struct msqid_ds *)&info) >= 0 ? 0 : -1);
	SHOW("IPC_INFO", "max %d mnb %d mni %d ssz %d seg %d", info.msgmax, info.msgmnb, info.msgmni, info.msgssz,
	     info.msgseg);
	return 0;
}
