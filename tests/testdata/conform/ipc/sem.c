/* System V semaphores: semget's sizes and keys, semop's all-or-nothing
 * operations, IPC_NOWAIT, ERANGE, EFBIG, E2BIG, semtimedop's timeout,
 * waiters counted by GETNCNT and GETZCNT, a blocked semop woken by
 * another process, interrupted by a signal (EINTR) and failed by the
 * set's removal (EIDRM), SEM_UNDO applied at exit, semctl's commands and
 * another user's permissions. Ids and keys are never printed. */
#include "../conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *info;
};

static int child_status(pid_t pid) {
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void on_alarm(int sig) { (void)sig; }

/* sysvipc prints the fields of /proc/sysvipc/sem's line for key that do
 * not depend on the kernel's ids and clock. */
static void sysvipc(const char *name, key_t key) {
	FILE *f = fopen("/proc/sysvipc/sem", "r");
	char line[512];
	int found = 0;
	fgets(line, sizeof line, f);
	SHOW(name, "header %s", strtok(line, "\n"));
	while (fgets(line, sizeof line, f)) {
		int k, id;
		unsigned perms, nsems, uid, gid, cuid, cgid;
		if (sscanf(line, "%d %d %o %u %u %u %u %u", &k, &id, &perms, &nsems, &uid, &gid, &cuid, &cgid) == 8 &&
		    k == key) {
			SHOW(name, "perms %o nsems %u uid %u gid %u cuid %u cgid %u", perms, nsems, uid, gid, cuid,
			     cgid);
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		SHOW(name, "%s", "not listed");
}

static int op(int id, unsigned short num, short delta, short flags) {
	struct sembuf b = {num, delta, flags};
	return semop(id, &b, 1);
}

static void values(const char *name, int id, int n) {
	unsigned short v[8];
	semctl(id, 0, GETALL, (union semun){.array = v});
	printf("%s:", name);
	for (int i = 0; i < n; i++)
		printf(" %d", v[i]);
	printf("\n");
	fflush(stdout);
}

/* wait_for_waiters polls GETNCNT or GETZCNT until n processes wait. */
static int wait_for_waiters(int id, int num, int cmd, int n) {
	for (int i = 0; i < 500; i++) {
		int got = semctl(id, num, cmd);
		if (got >= n)
			return got;
		usleep(10000);
	}
	return semctl(id, num, cmd);
}

int main(void) {
	key_t key = 0x4a200000 | (getpid() & 0xffff);
	RET("semget 0 sems", semget(IPC_PRIVATE, 0, 0600));
	RET("semget negative", semget(IPC_PRIVATE, -1, 0600));
	RET("semget too many", semget(IPC_PRIVATE, 32001, 0600));
	int id = semget(key, 3, IPC_CREAT | IPC_EXCL | 0640);
	SHOW("semget create", "%s", id >= 0 ? "ok" : strerrorname_np(errno));
	RET("semget same key fewer", semget(key, 2, 0) == id ? 0 : -2);
	RET("semget same key 0", semget(key, 0, 0) == id ? 0 : -2);
	RET("semget same key more", semget(key, 4, 0));
	RET("semget excl", semget(key, 3, IPC_CREAT | IPC_EXCL | 0600));
	RET("semget missing", semget(key + 1, 3, 0600));

	struct semid_ds ds;
	RET("IPC_STAT", semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}));
	SHOW("stat", "mode %o nsems %lu otime %ld ctime set %d", ds.sem_perm.mode & 0777, ds.sem_nsems,
	     (long)ds.sem_otime, ds.sem_ctime != 0);
	values("initial", id, 3);
	sysvipc("sysvipc", key);

	RET("SETVAL 1 5", semctl(id, 1, SETVAL, (union semun){.val = 5}));
	RET("SETVAL too big", semctl(id, 1, SETVAL, (union semun){.val = 32768}));
	RET("SETVAL negative", semctl(id, 1, SETVAL, (union semun){.val = -1}));
	RET("SETVAL bad num", semctl(id, 3, SETVAL, (union semun){.val = 1}));
	RET("GETVAL 1", semctl(id, 1, GETVAL));
	RET("GETVAL bad num", semctl(id, 5, GETVAL));
	RET("GETPID is me", semctl(id, 1, GETPID) == getpid());
	RET("GETPID untouched", semctl(id, 0, GETPID));
	unsigned short all[3] = {1, 2, 3};
	RET("SETALL", semctl(id, 0, SETALL, (union semun){.array = all}));
	values("after SETALL", id, 3);
	all[2] = 40000;
	RET("SETALL out of range", semctl(id, 0, SETALL, (union semun){.array = all}));
	RET("SETALL bad pointer", semctl(id, 0, SETALL, (union semun){.array = BAD}));
	RET("GETALL bad pointer", semctl(id, 0, GETALL, (union semun){.array = BAD}));

	/* All or nothing: the second operation cannot be done, nothing is. */
	struct sembuf two[2] = {{0, -1, IPC_NOWAIT}, {1, -5, IPC_NOWAIT}};
	RET("semop all or nothing", semop(id, two, 2));
	values("unchanged", id, 3);
	two[1].sem_op = -2;
	RET("semop both", semop(id, two, 2));
	values("both done", id, 3);
	RET("semop zero wait nowait", op(id, 2, 0, IPC_NOWAIT));
	RET("semop zero ok", op(id, 0, 0, IPC_NOWAIT));
	RET("semop past SEMVMX", op(id, 2, 32767, 0));
	RET("semop EFBIG", op(id, 3, 1, 0));
	RET("semop 0 ops", semop(id, two, 0));
	RET("semop 501 ops", semop(id, two, 501));
	RET("semop bad pointer", semop(id, BAD, 1));
	RET("semop bad id", semop(-1, two, 1));
	RET("IPC_STAT", semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}));
	SHOW("otime set", "%d", ds.sem_otime != 0);

	struct timespec ts = {0, 50000000};
	struct sembuf dec = {0, -1, 0};
	RET("semtimedop times out", semtimedop(id, &dec, 1, &ts));
	ts.tv_nsec = 1000000000;
	RET("semtimedop bad timeout", semtimedop(id, &dec, 1, &ts));
	RET("semtimedop timeout bad pointer", semtimedop(id, &dec, 1, BAD));

	/* Two processes wait for semaphore 0 to grow, one for 2 to be 0. */
	pid_t a = fork();
	if (a == 0)
		_exit(op(id, 0, -1, 0) == 0 ? 0 : errno);
	pid_t b = fork();
	if (b == 0)
		_exit(op(id, 0, -1, 0) == 0 ? 0 : errno);
	pid_t z = fork();
	if (z == 0)
		_exit(op(id, 2, 0, 0) == 0 ? 0 : errno);
	SHOW("GETNCNT 0", "%d", wait_for_waiters(id, 0, GETNCNT, 2));
	SHOW("GETZCNT 2", "%d", wait_for_waiters(id, 2, GETZCNT, 1));
	RET("GETZCNT 0", semctl(id, 0, GETZCNT));
	RET("semop +2", op(id, 0, 2, 0));
	SHOW("waiter a", "%d", child_status(a));
	SHOW("waiter b", "%d", child_status(b));
	RET("semop 2 to 0", op(id, 2, -3, 0));
	SHOW("zero waiter", "%d", child_status(z));
	RET("GETNCNT 0 after", semctl(id, 0, GETNCNT));
	values("after waiters", id, 3);

	/* A signal interrupts a blocked semop: EINTR even with SA_RESTART. */
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	RET("semop interrupted", op(id, 0, -1, 0));
	RET("GETNCNT after interrupt", semctl(id, 0, GETNCNT));

	/* SEM_UNDO: a child's operations are undone when it exits. */
	pid_t u = fork();
	if (u == 0) {
		op(id, 1, 4, SEM_UNDO);
		op(id, 2, 1, SEM_UNDO);
		op(id, 2, 1, 0);
		_exit(0);
	}
	child_status(u);
	values("after undo at exit", id, 3);
	/* Undo clamps at 0 when another process took the value meanwhile. */
	u = fork();
	if (u == 0) {
		op(id, 0, 3, SEM_UNDO);
		usleep(200000);
		_exit(0);
	}
	usleep(100000);
	RET("take the child's 3", op(id, 0, -3, 0));
	child_status(u);
	values("after clamped undo", id, 3);
	/* SETVAL forgets the adjustments. */
	u = fork();
	if (u == 0) {
		op(id, 1, 2, SEM_UNDO);
		semctl(id, 1, SETVAL, (union semun){.val = 7});
		_exit(0);
	}
	child_status(u);
	values("after SETVAL cleared undo", id, 3);
	/* An adjustment may reach -32768, not -32769. */
	RET("SETVAL 0 0", semctl(id, 0, SETVAL, (union semun){.val = 0}));
	RET("up 32767 undo", op(id, 0, 32767, SEM_UNDO));
	RET("down 32767", op(id, 0, -32767, 0));
	RET("up 1 undo (adjustment -32768)", op(id, 0, 1, SEM_UNDO));
	RET("down 1", op(id, 0, -1, 0));
	RET("up 1 undo (adjustment -32769)", op(id, 0, 1, SEM_UNDO));
	values("after undo range", id, 3);
	RET("SETVAL 0 0 (forgets the adjustment)", semctl(id, 0, SETVAL, (union semun){.val = 0}));

	/* Another user with mode 0640. */
	pid_t o = fork();
	if (o == 0) {
		setresgid(1000, 1000, 1000);
		setresuid(1000, 1000, 1000);
		RET("other: GETVAL", semctl(id, 0, GETVAL));
		RET("other: SETVAL", semctl(id, 0, SETVAL, (union semun){.val = 1}));
		RET("other: semop", op(id, 0, 1, IPC_NOWAIT));
		RET("other: semop wait-for-zero", op(id, 0, 0, IPC_NOWAIT));
		RET("other: semget", semget(key, 0, 0) == id ? 0 : -2);
		RET("other: semget write", semget(key, 0, 0200));
		struct semid_ds d;
		RET("other: IPC_STAT", semctl(id, 0, IPC_STAT, (union semun){.buf = &d}));
		RET("other: IPC_RMID", semctl(id, 0, IPC_RMID));
		_exit(0);
	}
	child_status(o);
	ds.sem_perm.mode = 0604;
	ds.sem_perm.uid = 1000;
	RET("IPC_SET", semctl(id, 0, IPC_SET, (union semun){.buf = &ds}));
	RET("IPC_STAT", semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}));
	SHOW("after IPC_SET", "mode %o uid %u cuid %u", ds.sem_perm.mode & 0777, ds.sem_perm.uid, ds.sem_perm.cuid);
	sysvipc("sysvipc after IPC_SET", key);
	o = fork();
	if (o == 0) {
		setresgid(1000, 1000, 1000);
		setresuid(1000, 1000, 1000);
		RET("owner: GETVAL", semctl(id, 0, GETVAL));
		RET("owner: semop", op(id, 0, 1, IPC_NOWAIT));
		_exit(0);
	}
	child_status(o);
	RET("IPC_STAT bad buffer", semctl(id, 0, IPC_STAT, (union semun){.buf = BAD}));
	RET("bad command", semctl(id, 0, 99));

	/* Removal fails a blocked semop with EIDRM. */
	RET("SETVAL 2 0", semctl(id, 2, SETVAL, (union semun){.val = 0}));
	pid_t r = fork();
	if (r == 0)
		_exit(op(id, 2, -1, 0) == 0 ? 0 : errno);
	wait_for_waiters(id, 2, GETNCNT, 1);
	RET("IPC_RMID", semctl(id, 0, IPC_RMID));
	SHOW("waiter after IPC_RMID", "%s", strerrorname_np(child_status(r)));
	RET("GETVAL removed", semctl(id, 0, GETVAL));
	RET("semop removed", op(id, 0, 1, 0));

	struct seminfo info;
	RET("IPC_INFO >= 0", semctl(0, 0, IPC_INFO, (union semun){.info = &info}) >= 0 ? 0 : -1);
	SHOW("IPC_INFO", "mni %d msl %d mns %d opm %d vmx %d aem %d", info.semmni, info.semmsl, info.semmns,
	     info.semopm, info.semvmx, info.semaem);
	return 0;
}
