/* mmap of /dev/zero is anonymous memory: private copies, shared between
 * a parent and its child, and a shared mapping through a read-only
 * descriptor can never be made writable (mprotect: EACCES), as LTP's
 * mprotect01. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

int main(void) {
	long page = sysconf(_SC_PAGESIZE);
	int rw = open("/dev/zero", O_RDWR), ro = open("/dev/zero", O_RDONLY), wo = open("/dev/zero", O_WRONLY);
	char *priv = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, rw, 0);
	SHOW("private.mapped", "%d", priv != MAP_FAILED);
	priv[0] = 5;
	SHOW("private.reads", "%d %d", priv[0], priv[1]);
	char *shared = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	SHOW("shared.mapped", "%d", shared != MAP_FAILED);
	if (fork() == 0) {
		shared[0] = 9, priv[0] = 9;
		_exit(0);
	}
	wait(NULL);
	SHOW("shared.after-child", "%d", shared[0]);
	SHOW("private.after-child", "%d", priv[0]);
	char *ro_shared = mmap(NULL, page, PROT_READ, MAP_SHARED, ro, 0);
	SHOW("readonly.shared.mapped", "%d", ro_shared != MAP_FAILED);
	RET("readonly.shared.mprotect-write", mprotect(ro_shared, page, PROT_READ | PROT_WRITE));
	RET("readonly.shared.write", (long)mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0));
	char *ro_priv = mmap(NULL, page, PROT_READ, MAP_PRIVATE, ro, 0);
	RET("readonly.private.mprotect-write", mprotect(ro_priv, page, PROT_READ | PROT_WRITE));
	RET("writeonly.private", (long)mmap(NULL, page, PROT_READ, MAP_PRIVATE, wo, 0));
	return 0;
}
