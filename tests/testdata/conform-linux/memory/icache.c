/* riscv_flush_icache(2), what glibc's __riscv_flush_icache calls: Linux
 * ignores the range, bad addresses included, and takes no flag but
 * SYS_RISCV_FLUSH_ICACHE_LOCAL (qemu-user takes any, so Linux itself is
 * the oracle). */
#include "../../conform/conform.h"
#include <sys/syscall.h>

int main(void) {
	char buf[64];
	RET("flush.range", syscall(SYS_riscv_flush_icache, buf, buf + sizeof buf, 0));
	RET("flush.local", syscall(SYS_riscv_flush_icache, buf, buf + sizeof buf, 1));
	RET("flush.reversed", syscall(SYS_riscv_flush_icache, buf + sizeof buf, buf, 0));
	RET("flush.everything", syscall(SYS_riscv_flush_icache, 0, ~0UL, 0));
	RET("flush.unmapped", syscall(SYS_riscv_flush_icache, BAD, (char *)BAD + 4096, 0));
	RET("flush.flag2", syscall(SYS_riscv_flush_icache, buf, buf + sizeof buf, 2));
	RET("flush.allflags", syscall(SYS_riscv_flush_icache, buf, buf + sizeof buf, ~0UL));
	return 0;
}
