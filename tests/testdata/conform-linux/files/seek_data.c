/* lseek's SEEK_DATA and SEEK_HOLE on a tmpfs file with holes: data is
 * the pages written, holes the pages never written and the end of the
 * file; ENXIO at or past the end, or with no data after the offset; a
 * directory refuses both (LTP's lseek11). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

int main(void) {
	mkdir("/mnt", 0755);
	RET("mount", mount("tmpfs", "/mnt", "tmpfs", 0, NULL));
	int fd = open("/mnt/sparse", O_RDWR | O_CREAT, 0644);
	RET("truncate", ftruncate(fd, 40 * 4096));
	RET("hole.empty", lseek(fd, 0, SEEK_HOLE));
	RET("data.empty", lseek(fd, 0, SEEK_DATA));
	pwrite(fd, "a", 1, 10 * 4096 + 100);
	pwrite(fd, "b", 1, 11 * 4096);
	pwrite(fd, "c", 1, 30 * 4096 + 4095);
	RET("data.0", lseek(fd, 0, SEEK_DATA));
	RET("data.in_page", lseek(fd, 10 * 4096 + 5, SEEK_DATA));
	RET("hole.0", lseek(fd, 0, SEEK_HOLE));
	RET("hole.in_data", lseek(fd, 10 * 4096 + 5, SEEK_HOLE));
	RET("data.after_first", lseek(fd, 12 * 4096, SEEK_DATA));
	RET("hole.in_last", lseek(fd, 30 * 4096 + 1, SEEK_HOLE));
	RET("data.after_last", lseek(fd, 31 * 4096, SEEK_DATA));
	RET("hole.after_last", lseek(fd, 31 * 4096, SEEK_HOLE));
	RET("data.at_end", lseek(fd, 40 * 4096, SEEK_DATA));
	RET("hole.at_end", lseek(fd, 40 * 4096, SEEK_HOLE));
	RET("hole.past_end", lseek(fd, 50 * 4096, SEEK_HOLE));
	RET("data.negative", lseek(fd, -1, SEEK_DATA));
	RET("position", lseek(fd, 0, SEEK_CUR));

	/* Written to its end: the only hole is the end. */
	pwrite(fd, "d", 1, 40 * 4096 - 1);
	RET("hole.last_page_written", lseek(fd, 39 * 4096, SEEK_HOLE));
	/* A punched page is a hole again. */
	RET("punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 11 * 4096, 4096));
	RET("hole.after_punch", lseek(fd, 10 * 4096, SEEK_HOLE));
	/* Truncated below the data. */
	RET("shrink", ftruncate(fd, 10 * 4096 + 50));
	RET("data.after_shrink", lseek(fd, 0, SEEK_DATA));
	RET("hole.after_shrink", lseek(fd, 0, SEEK_HOLE));
	/* A file never written with holes is data throughout. */
	int full = open("/mnt/full", O_RDWR | O_CREAT, 0644);
	char page[4096] = {1};
	write(full, page, sizeof page);
	write(full, page, 100);
	RET("full.data", lseek(full, 200, SEEK_DATA));
	RET("full.hole", lseek(full, 200, SEEK_HOLE));
	int dir = open("/mnt", O_RDONLY | O_DIRECTORY);
	RET("dir.data", lseek(dir, 0, SEEK_DATA));
	RET("dir.hole", lseek(dir, 0, SEEK_HOLE));
	return 0;
}
