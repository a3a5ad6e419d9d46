/* An eventfd write of other than 8 bytes is EINVAL, blocking or not, as
 * Linux's; the kernel once took 8 bytes of a longer write and waited to
 * "write the rest", adding the value until the counter was full (the
 * resource fuzzer's seed 1, program 266). */
#include "../../conform/conform.h"
#include <stdint.h>
#include <sys/eventfd.h>

static uint64_t buf[8192];

int main(void) {
	buf[0] = 2, buf[1] = 5;
	int e = eventfd(0, 0);
	RET("blocking.write.16", write(e, buf, 16));
	RET("blocking.write.64k", write(e, buf, sizeof buf));
	close(e);
	e = eventfd(0, EFD_NONBLOCK);
	RET("write.16", write(e, buf, 16));
	RET("write.64k", write(e, buf, sizeof buf));
	RET("write.7", write(e, buf, 7));
	RET("write.8", write(e, buf, 8));
	uint64_t v[2] = {0, 0};
	RET("read.16", read(e, v, 16));
	SHOW("count", "%llu", (unsigned long long)v[0]);
	RET("read.empty", read(e, v, 8));
	return 0;
}
