/* open(O_RDONLY | O_TRUNC): Linux asks write permission for the
 * truncation (build_open_flags adds MAY_WRITE) and truncates the file,
 * though the description only reads; a directory is EISDIR. */
#include "../conform.h"
#include <sys/stat.h>

static void size(const char *name, const char *path) {
	struct stat st;
	if (stat(path, &st) != 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%ld", (long)st.st_size);
}

int main(void) {
	int fd = open("rdtrunc-f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	RET("write", write(fd, "hello", 5));
	close(fd);
	fd = open("rdtrunc-f", O_RDONLY | O_TRUNC);
	SHOW("open(O_RDONLY|O_TRUNC)", "%s", fd >= 0 ? "opened" : strerrorname_np(errno));
	size("size after", "rdtrunc-f");
	char c;
	RET("read", read(fd, &c, 1));
	RET("write on it", write(fd, "x", 1));
	close(fd);
	mkdir("rdtrunc-d", 0755);
	RET("directory", open("rdtrunc-d", O_RDONLY | O_TRUNC));
	RET("O_PATH ignores O_TRUNC", open("rdtrunc-f", O_PATH | O_TRUNC) >= 0);
	unlink("rdtrunc-f");
	rmdir("rdtrunc-d");
	return 0;
}
