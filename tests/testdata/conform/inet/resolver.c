/* A DNS lookup through glibc's stub resolver over UDP: the program runs its
 * own name server on 127.0.0.1 (a child process, port chosen by bind(port
 * 0)) and points the resolver at it, so no query leaves the machine.
 * res_query does what getaddrinfo's DNS backend does: a non-blocking UDP
 * socket, connect, send, poll, recvfrom. */
#include "../conform.h"
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

/* serve answers A queries for jiege.test with 192.0.2.7, anything else
 * with NXDOMAIN. */
static void serve(int s) {
	static const unsigned char known[] = "\5jiege\4test";
	for (;;) {
		unsigned char q[512], r[512];
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		int n = recvfrom(s, q, sizeof q, 0, (struct sockaddr *)&from, &fl);
		if (n < 12)
			continue;
		/* The question: a name, then type and class. */
		int end = 12;
		while (end < n && q[end] != 0)
			end += q[end] + 1;
		end += 5;
		if (end > n)
			continue;
		memcpy(r, q, end);
		r[2] = 0x81;               /* QR, RD */
		r[3] = 0x80;               /* RA, NOERROR */
		r[4] = 0, r[5] = 1;        /* one question */
		r[6] = 0, r[7] = 0;        /* no answers yet */
		r[8] = r[9] = r[10] = r[11] = 0;
		int len = end;
		int is_a = q[end - 3] == 1 && q[end - 4] == 0;
		if (memcmp(q + 12, known, sizeof known) == 0 && is_a) {
			static const unsigned char answer[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7};
			memcpy(r + len, answer, sizeof answer);
			len += sizeof answer;
			r[7] = 1;
		} else {
			r[3] = 0x83; /* NXDOMAIN */
		}
		sendto(s, r, len, 0, (struct sockaddr *)&from, fl);
	}
}

static void lookup(const char *name) {
	unsigned char ans[512];
	char label[80];
	h_errno = 0;
	int n = res_query(name, C_IN, T_A, ans, sizeof ans);
	snprintf(label, sizeof label, "res_query %s", name);
	if (n < 0) {
		SHOW(label, "-1 h_errno %d", h_errno);
		return;
	}
	int ancount = ans[6] << 8 | ans[7];
	/* The single answer's address is the last four bytes. */
	SHOW(label, "%d bytes, %d answer, rcode %d, %d.%d.%d.%d", n, ancount, ans[3] & 15, ans[n - 4], ans[n - 3],
	     ans[n - 2], ans[n - 1]);
}

int main(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	RET("bind", bind(s, (struct sockaddr *)&a, sizeof a));
	socklen_t al = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &al);
	pid_t server = fork();
	if (server == 0) {
		serve(s);
		_exit(0);
	}
	close(s);

	RET("res_init", res_init());
	_res.options = RES_INIT | RES_RECURSE | RES_DEFNAMES | RES_DNSRCH;
	_res.nscount = 1;
	_res.nsaddr_list[0] = a;
	_res.retrans = 5;
	_res.retry = 2;
	lookup("jiege.test");
	lookup("missing.test");
	lookup("jiege.test");

	kill(server, SIGKILL);
	int st;
	waitpid(server, &st, 0);
	SHOW("server", "%s", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
	return 0;
}
