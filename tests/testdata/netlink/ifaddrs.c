/* What programs read about the network interfaces: glibc's getifaddrs
 * (netlink RTM_GETLINK and RTM_GETADDR dumps underneath) and the same
 * dumps and errors asked for directly on a NETLINK_ROUTE socket. Run as a
 * command of tests/testdata/programs/netlink.sh on the kernel and on
 * Debian's Linux; prints no counters, pids or sequence numbers. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *addr(struct sockaddr *sa, char *buf, size_t len)
{
	if (!sa)
		return "-";
	switch (sa->sa_family) {
	case AF_INET:
		return inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, buf, len);
	case AF_INET6:
		return inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, buf, len);
	case AF_PACKET: {
		struct sockaddr_ll *ll = (struct sockaddr_ll *)sa;
		char *p = buf;
		for (int i = 0; i < ll->sll_halen; i++)
			p += sprintf(p, i ? ":%02x" : "%02x", ll->sll_addr[i]);
		sprintf(p, " ifindex %d hatype %d", ll->sll_ifindex, ll->sll_hatype);
		return buf;
	}
	}
	snprintf(buf, len, "family %d", sa->sa_family);
	return buf;
}

static void show_getifaddrs(void)
{
	struct ifaddrs *list;
	if (getifaddrs(&list) != 0) {
		printf("getifaddrs: %s\n", strerrorname_np(errno));
		return;
	}
	for (struct ifaddrs *i = list; i; i = i->ifa_next) {
		char a[128], m[128], b[128];
		int fam = i->ifa_addr ? i->ifa_addr->sa_family : -1;
		printf("ifaddr %s family %d flags %#x addr %s netmask %s %s %s data %s\n", i->ifa_name, fam,
		       i->ifa_flags, addr(i->ifa_addr, a, sizeof a), addr(i->ifa_netmask, m, sizeof m),
		       i->ifa_flags & IFF_BROADCAST ? "broadcast" : "dstaddr",
		       addr(i->ifa_broadaddr, b, sizeof b), i->ifa_data ? "yes" : "no");
	}
	freeifaddrs(list);
	printf("if_nametoindex lo %u eth0 %u none %u\n", if_nametoindex("lo"), if_nametoindex("eth0"),
	       if_nametoindex("none0"));
}

static int nl_request(int fd, int type, int flags, int family)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = {.h = {.nlmsg_len = sizeof req, .nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = 7},
		 .g = {.rtgen_family = family}};
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	return sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&to, sizeof to);
}

/* dump reads one dump's answer and prints each message's fields. */
static void dump(int fd, const char *what)
{
	static char buf[32768];
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof from;
		int n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			printf("%s: recv %s\n", what, strerrorname_np(errno));
			return;
		}
		printf("%s: datagram from pid %u groups %u fromlen %u\n", what, from.nl_pid, from.nl_groups, fromlen);
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != 7)
				printf("%s: seq %u\n", what, h->nlmsg_seq);
			switch (h->nlmsg_type) {
			case NLMSG_DONE:
				printf("%s: done len %u flags %#x value %d\n", what, h->nlmsg_len, h->nlmsg_flags,
				       *(int *)NLMSG_DATA(h));
				return;
			case NLMSG_ERROR: {
				struct nlmsgerr *e = NLMSG_DATA(h);
				printf("%s: error %d (%s) len %u flags %#x of type %d\n", what, e->error,
				       e->error ? strerrorname_np(-e->error) : "ack", h->nlmsg_len, h->nlmsg_flags,
				       e->msg.nlmsg_type);
				return;
			}
			case RTM_NEWLINK: {
				struct ifinfomsg *ifi = NLMSG_DATA(h);
				printf("%s: link index %d type %d flags %#x change %#x multi %d", what, ifi->ifi_index,
				       ifi->ifi_type, ifi->ifi_flags, ifi->ifi_change, !!(h->nlmsg_flags & NLM_F_MULTI));
				int len = IFLA_PAYLOAD(h);
				for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
					unsigned char *d = RTA_DATA(a);
					switch (a->rta_type) {
					case IFLA_IFNAME:
						printf(" name %s", (char *)d);
						break;
					case IFLA_MTU:
						printf(" mtu %u", *(unsigned *)d);
						break;
					case IFLA_ADDRESS:
					case IFLA_BROADCAST:
						printf(a->rta_type == IFLA_ADDRESS ? " address" : " broadcast");
						for (unsigned i = 0; i < RTA_PAYLOAD(a); i++)
							printf("%c%02x", i ? ':' : ' ', d[i]);
						break;
					case IFLA_OPERSTATE:
						printf(" operstate %u", d[0]);
						break;
					}
				}
				printf("\n");
				break;
			}
			case RTM_NEWADDR: {
				struct ifaddrmsg *ifa = NLMSG_DATA(h);
				char a[64];
				printf("%s: addr index %u family %u prefix %u scope %u", what, ifa->ifa_index,
				       ifa->ifa_family, ifa->ifa_prefixlen, ifa->ifa_scope);
				int len = IFA_PAYLOAD(h);
				for (struct rtattr *r = IFA_RTA(ifa); RTA_OK(r, len); r = RTA_NEXT(r, len)) {
					switch (r->rta_type) {
					case IFA_ADDRESS:
					case IFA_LOCAL:
					case IFA_BROADCAST:
						printf(" %s %s",
						       r->rta_type == IFA_ADDRESS ? "address"
						       : r->rta_type == IFA_LOCAL ? "local"
										  : "broadcast",
						       inet_ntop(ifa->ifa_family, RTA_DATA(r), a, sizeof a));
						break;
					case IFA_LABEL:
						printf(" label %s", (char *)RTA_DATA(r));
						break;
					}
				}
				printf("\n");
				break;
			}
			default:
				printf("%s: message type %u\n", what, h->nlmsg_type);
			}
		}
	}
}

int main(void)
{
	show_getifaddrs();

	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	printf("socket: %s\n", fd < 0 ? strerrorname_np(errno) : "ok");
	struct sockaddr_nl me = {.nl_family = AF_NETLINK};
	printf("bind: %d\n", bind(fd, (struct sockaddr *)&me, sizeof me));
	socklen_t melen = sizeof me;
	printf("getsockname: %d len %u family %d pid is mine %d groups %u\n",
	       getsockname(fd, (struct sockaddr *)&me, &melen), melen, me.nl_family, me.nl_pid == (unsigned)getpid(),
	       me.nl_groups);
	int v;
	socklen_t vlen = sizeof v;
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vlen);
	printf("SO_TYPE %d", v);
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &vlen);
	printf(" SO_PROTOCOL %d", v);
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &vlen);
	printf(" SO_DOMAIN %d\n", v);

	nl_request(fd, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC);
	dump(fd, "getlink");
	nl_request(fd, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, AF_INET);
	dump(fd, "getaddr4");
	nl_request(fd, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC);
	dump(fd, "getaddr");
	nl_request(fd, 0x7ff, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC);
	dump(fd, "unknown type");
	nl_request(fd, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK, AF_UNSPEC);
	dump(fd, "getlink with ack");

	char tiny[16];
	nl_request(fd, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC);
	int n = recv(fd, tiny, sizeof tiny, MSG_TRUNC);
	printf("recv 16 bytes with MSG_TRUNC: %s\n", n > 16 ? "longer" : strerrorname_np(errno));
	n = recv(fd, tiny, sizeof tiny, MSG_DONTWAIT);
	printf("recv after: %d %s\n", n < 0 ? -1 : n > 0, n < 0 ? strerrorname_np(errno) : "data");
	close(fd);

	fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE);
	nl_request(fd, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC);
	dump(fd, "dgram getlink");
	close(fd);
	printf("socket NETLINK_GENERIC+99: %s\n",
	       socket(AF_NETLINK, SOCK_RAW, 99) < 0 ? strerrorname_np(errno) : "ok");
	printf("socket SOCK_STREAM: %s\n",
	       socket(AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE) < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}
