/* System V shared memory: shmget's sizes and keys, shmat's addresses
 * (SHM_RND, SHM_REMAP, overlap) and SHM_RDONLY, the attach count through
 * a second attachment, fork (inherited) and exec and exit (detached),
 * IPC_RMID of an attached segment (private key, SHM_DEST, gone at the
 * last detach), shmctl's commands, another user's permissions and
 * /proc/sysvipc/shm. Ids, keys and addresses are never printed. */
#include "../conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>

static int child_status(pid_t pid) {
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static int nattch(int id) {
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) < 0)
		return -errno;
	return ds.shm_nattch;
}

/* sysvipc prints the fields of /proc/sysvipc/shm's line for key that do
 * not depend on the kernel's ids, pids and clock. */
static void sysvipc(const char *name, key_t key) {
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[512];
	int found = 0;
	fgets(line, sizeof line, f);
	SHOW(name, "header %s", strtok(line, "\n"));
	while (fgets(line, sizeof line, f)) {
		int k, id;
		unsigned perms, cpid, lpid, uid, gid, cuid, cgid;
		unsigned long size, nattch;
		if (sscanf(line, "%d %d %o %lu %u %u %lu %u %u %u %u", &k, &id, &perms, &size, &cpid, &lpid, &nattch,
			   &uid, &gid, &cuid, &cgid) == 11 &&
		    k == key) {
			SHOW(name, "perms %o size %lu cpid is me %d nattch %lu uid %u cuid %u", perms, size,
			     cpid == (unsigned)getpid(), nattch, uid, cuid);
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		SHOW(name, "%s", "not listed");
}

int main(int argc, char **argv) {
	if (argc > 2) {
		/* Exec'd by the exec test: say so, then wait to be killed. */
		write(atoi(argv[2]), "x", 1);
		pause();
		return 0;
	}
	key_t key = 0x4a300000 | (getpid() & 0xffff);
	RET("shmget size 0", shmget(IPC_PRIVATE, 0, 0600));
	int id = shmget(key, 10000, IPC_CREAT | IPC_EXCL | 0640);
	SHOW("shmget create", "%s", id >= 0 ? "ok" : strerrorname_np(errno));
	RET("shmget same key smaller", shmget(key, 4096, 0) == id ? 0 : -2);
	RET("shmget same key size 0", shmget(key, 0, 0) == id ? 0 : -2);
	RET("shmget same key larger", shmget(key, 10001, 0));
	RET("shmget excl", shmget(key, 10000, IPC_CREAT | IPC_EXCL | 0600));
	RET("shmget missing", shmget(key + 1, 4096, 0600));

	struct shmid_ds ds;
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));
	SHOW("stat", "mode %o size %zu nattch %lu cpid is me %d lpid %d atime %ld dtime %ld", ds.shm_perm.mode,
	     ds.shm_segsz, ds.shm_nattch, ds.shm_cpid == getpid(), ds.shm_lpid, (long)ds.shm_atime,
	     (long)ds.shm_dtime);
	sysvipc("sysvipc", key);

	char *p = shmat(id, NULL, 0);
	SHOW("shmat", "%s", p == (void *)-1 ? strerrorname_np(errno) : "ok");
	SHOW("zero filled", "%d %d", p[0], p[9999]);
	strcpy(p, "hello");
	p[12287] = 'e'; /* the last page is mapped whole */
	char *q = shmat(id, NULL, SHM_RDONLY);
	SHOW("second shmat", "%s same memory %d", q == (void *)-1 ? strerrorname_np(errno) : "ok",
	     strcmp(q, "hello") == 0 && q[12287] == 'e');
	RET("nattch 2", nattch(id));
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));
	SHOW("stat attached", "lpid is me %d atime set %d", ds.shm_lpid == getpid(), ds.shm_atime != 0);
	sysvipc("sysvipc attached", key);

	/* A write through the read-only attachment faults. */
	pid_t pid = fork();
	if (pid == 0) {
		q[0] = 'x';
		_exit(0);
	}
	SHOW("write to SHM_RDONLY", "%d", child_status(pid));
	RET("mprotect SHM_RDONLY writable", mprotect(q, 4096, PROT_READ | PROT_WRITE));
	RET("mprotect SHM_RDONLY read-only", mprotect(q, 4096, PROT_READ));
	RET("mprotect read-write attachment read-only", mprotect(p + 4096, 4096, PROT_READ));
	RET("nattch after a split", nattch(id));
	RET("mprotect it back", mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE));

	/* fork: the child inherits both attachments and shares the memory. */
	pid = fork();
	if (pid == 0) {
		SHOW("child nattch", "%d", nattch(id));
		strcpy(p, "from child");
		_exit(0);
	}
	SHOW("child", "%d", child_status(pid));
	SHOW("after the child's exit", "nattch %d memory %s", nattch(id), p);

	/* exec detaches. */
	int fds[2];
	pipe(fds);
	pid = fork();
	if (pid == 0) {
		char fd[16];
		snprintf(fd, sizeof fd, "%d", fds[1]);
		execl("/proc/self/exe", argv[0], "exec", fd, (char *)NULL);
		_exit(127);
	}
	char c;
	read(fds[0], &c, 1);
	SHOW("nattch while the child runs another program", "%d", nattch(id));
	kill(pid, SIGKILL);
	child_status(pid);

	RET("shmdt second", shmdt(q));
	RET("shmdt again", shmdt(q));
	RET("shmdt unaligned", shmdt(p + 1));
	RET("shmdt not a segment", shmdt(&key));
	RET("nattch 1", nattch(id));
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));
	SHOW("stat detached", "dtime set %d", ds.shm_dtime != 0);

	/* Addresses. */
	char *area = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(area, 8 * 4096);
	char *r = shmat(id, area + 100, 0);
	SHOW("unaligned", "%s", r == (void *)-1 ? strerrorname_np(errno) : "ok");
	r = shmat(id, area + 100, SHM_RND);
	SHOW("SHM_RND", "%s at the page %d memory %s", r == (void *)-1 ? strerrorname_np(errno) : "ok", r == area,
	     r == area ? r : "");
	r = shmat(id, area + 4096, 0);
	SHOW("overlapping", "%s", r == (void *)-1 ? strerrorname_np(errno) : "ok");
	r = shmat(id, area + 4096, SHM_REMAP);
	SHOW("SHM_REMAP", "%s at %d", r == (void *)-1 ? strerrorname_np(errno) : "ok", r == area + 4096);
	/* SHM_REMAP without an address is EINVAL on Linux, not compared:
	 * qemu-riscv64 picks the address itself and asks for SHM_REMAP. */
	RET("nattch 3", nattch(id));
	RET("shmdt the remapped", shmdt(area + 4096));
	RET("shmdt the rounded", shmdt(area));
	RET("nattch 1", nattch(id));
	r = shmat(-1, NULL, 0);
	SHOW("shmat bad id", "%s", r == (void *)-1 ? strerrorname_np(errno) : "ok");

	/* Another user with mode 0640, then 0644. */
	pid = fork();
	if (pid == 0) {
		setresgid(1000, 1000, 1000);
		setresuid(1000, 1000, 1000);
		char *o = shmat(id, NULL, SHM_RDONLY);
		SHOW("other: shmat read", "%s", o == (void *)-1 ? strerrorname_np(errno) : "ok");
		RET("other: IPC_STAT", shmctl(id, IPC_STAT, &ds));
		RET("other: IPC_RMID", shmctl(id, IPC_RMID, NULL));
		RET("other: SHM_LOCK", shmctl(id, SHM_LOCK, NULL));
		_exit(0);
	}
	child_status(pid);
	ds.shm_perm.mode = 0644;
	RET("IPC_SET 0644", shmctl(id, IPC_SET, &ds));
	pid = fork();
	if (pid == 0) {
		setresgid(1000, 1000, 1000);
		setresuid(1000, 1000, 1000);
		char *o = shmat(id, NULL, SHM_RDONLY);
		SHOW("other: shmat read", "%s %s", o == (void *)-1 ? strerrorname_np(errno) : "ok",
		     o == (void *)-1 ? "" : o);
		o = shmat(id, NULL, 0);
		SHOW("other: shmat write", "%s", o == (void *)-1 ? strerrorname_np(errno) : "ok");
		_exit(0);
	}
	child_status(pid);

	RET("SHM_LOCK", shmctl(id, SHM_LOCK, NULL));
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));
	SHOW("locked mode", "%o", ds.shm_perm.mode);
	RET("SHM_UNLOCK", shmctl(id, SHM_UNLOCK, NULL));
	RET("IPC_STAT bad buffer", shmctl(id, IPC_STAT, BAD));
	RET("bad command", shmctl(id, 99, &ds));

	/* Removal while attached: the key is gone, the memory stays until the
	 * last detach. */
	RET("IPC_RMID attached", shmctl(id, IPC_RMID, NULL));
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));
	SHOW("removed", "key %d mode %o nattch %lu", ds.shm_perm.__key, ds.shm_perm.mode, ds.shm_nattch);
	RET("shmget removed key", shmget(key, 4096, 0));
	SHOW("memory still there", "%s", p);
	char *again = shmat(id, NULL, 0);
	SHOW("shmat removed", "%s", again == (void *)-1 ? strerrorname_np(errno) : "ok");
	RET("nattch", nattch(id));
	RET("shmdt", shmdt(again));
	RET("shmdt last", shmdt(p));
	RET("IPC_STAT gone", shmctl(id, IPC_STAT, &ds));

	/* Removal of a segment nothing maps, and exit detaching. */
	id = shmget(IPC_PRIVATE, 4096, 0600);
	pid = fork();
	if (pid == 0) {
		shmat(id, NULL, 0);
		_exit(0);
	}
	child_status(pid);
	RET("nattch after the child's exit", nattch(id));
	RET("IPC_RMID", shmctl(id, IPC_RMID, NULL));
	RET("IPC_STAT", shmctl(id, IPC_STAT, &ds));

	struct shminfo info;
	RET("IPC_INFO >= 0", shmctl(0, IPC_INFO, (struct shmid_ds *)&info) >= 0 ? 0 : -1);
	SHOW("IPC_INFO", "max %lu min %lu mni %lu seg %lu all %lu", info.shmmax, info.shmmin, info.shmmni,
	     info.shmseg, info.shmall);
	return 0;
}
