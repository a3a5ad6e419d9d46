/* copy_file_range within one file, to past its end: Linux copies at most
 * what the source held when the call began (from the offset to the size
 * then), so the copy never reads back what it wrote. The fuzzer's seed 2
 * program 129 copied 2 GiB of a 64 KiB memfd into itself at 2^59 and
 * filled memory with it. Also the source's end, an offset past it and
 * the overlap check, which uses the shortened count. */
#include "../../conform/conform.h"
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

static void show_size(const char *name, int fd) {
	struct stat st;
	fstat(fd, &st);
	SHOW(name, "%lld", (long long)st.st_size);
}

int main(void) {
	static char buf[65536];
	memset(buf, 'x', sizeof buf);
	int fd = memfd_create("self", 0);
	RET("write", write(fd, buf, sizeof buf));
	off_t in = 4095, out = (off_t)1 << 40;
	RET("copy.past_end", copy_file_range(fd, &in, fd, &out, (size_t)1 << 31, 0));
	SHOW("copy.past_end.in", "%lld", (long long)in);
	SHOW("copy.past_end.out", "%lld", (long long)out);
	show_size("copy.past_end.size", fd);

	/* The file's position as the source, to just after the data. */
	RET("ftruncate", ftruncate(fd, 65536));
	RET("lseek", lseek(fd, 65536 - 100, SEEK_SET));
	out = 65536;
	RET("copy.position", copy_file_range(fd, NULL, fd, &out, 1 << 20, 0));
	RET("copy.position.pos", lseek(fd, 0, SEEK_CUR));
	show_size("copy.position.size", fd);

	in = 1 << 20, out = 0;
	RET("copy.in_past_size", copy_file_range(fd, &in, fd, &out, 4096, 0));
	in = 65536 - 10, out = 65536;
	RET("copy.shortened_no_overlap", copy_file_range(fd, &in, fd, &out, 1 << 20, 0));
	in = 100, out = 200;
	RET("copy.overlap", copy_file_range(fd, &in, fd, &out, 4096, 0));
	return 0;
}
