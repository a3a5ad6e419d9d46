/* System V IPC's times follow the wall clock that clock_settime moved,
 * as the kernel's ktime_get_real_seconds does: a message queue's send,
 * receive and change times, a semaphore set's operation time and a
 * segment's attach time, taken after the clock went a day ahead, are
 * within a second of time(). (LTP's msgsnd01 and shmctl01 run after the
 * clock tests have set it.) Linux is the oracle: qemu-riscv64 would set
 * the host's clock. */
#include "../../conform/conform.h"
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

static const char *near(time_t t) {
	time_t now = time(NULL);
	return t >= now - 1 && t <= now ? "now" : "elsewhen";
}

int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 86400;
	RET("settime", clock_settime(CLOCK_REALTIME, &ts));

	int q = msgget(IPC_PRIVATE, 0600);
	struct {
		long type;
		char text[8];
	} m = {1, "hi"};
	RET("msgsnd", msgsnd(q, &m, 3, 0));
	RET("msgrcv", msgrcv(q, &m, sizeof m.text, 0, 0));
	struct msqid_ds mds;
	msgctl(q, IPC_STAT, &mds);
	SHOW("msg times", "ctime %s stime %s rtime %s", near(mds.msg_ctime), near(mds.msg_stime), near(mds.msg_rtime));
	msgctl(q, IPC_RMID, NULL);

	int s = semget(IPC_PRIVATE, 1, 0600);
	struct sembuf op = {0, 1, 0};
	RET("semop", semop(s, &op, 1));
	struct semid_ds sds;
	union {
		int val;
		struct semid_ds *buf;
	} arg = {.buf = &sds};
	semctl(s, 0, IPC_STAT, arg);
	SHOW("sem times", "ctime %s otime %s", near(sds.sem_ctime), near(sds.sem_otime));
	semctl(s, 0, IPC_RMID);

	int id = shmget(IPC_PRIVATE, 4096, 0600);
	void *at = shmat(id, NULL, 0);
	RET("shmdt", shmdt(at));
	struct shmid_ds shds;
	shmctl(id, IPC_STAT, &shds);
	SHOW("shm times", "ctime %s atime %s dtime %s", near(shds.shm_ctime), near(shds.shm_atime), near(shds.shm_dtime));
	shmctl(id, IPC_RMID, NULL);

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec -= 86400;
	RET("settime back", clock_settime(CLOCK_REALTIME, &ts));
	return 0;
}
