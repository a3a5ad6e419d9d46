package syscall

import (
	"encoding/binary"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

// The interface ioctls (SIOCGIF*) that ifconfig, glibc's if_nametoindex
// and others make on any socket: struct ifreq is the interface's name
// (IFNAMSIZ bytes) then a 24-byte union.
const (
	ifreqSize  = 40
	ifreqUnion = unix.IFNAMSIZ
	ifconfSize = 16 // struct ifconf: int ifc_len, padding, the buffer's address
)

// ifreqIoctl serves an interface ioctl; handled is false for any other
// request.
func ifreqIoctl(t *kernel.Task, req, arg uint64) (handled bool, err error) {
	switch req {
	case unix.SIOCGIFCONF:
		return true, ifconf(t, arg)
	case unix.SIOCGIFNAME, unix.SIOCGIFINDEX, unix.SIOCGIFFLAGS, unix.SIOCGIFMTU, unix.SIOCGIFMETRIC,
		unix.SIOCGIFTXQLEN, unix.SIOCGIFHWADDR, unix.SIOCGIFMAP, unix.SIOCGIFADDR, unix.SIOCGIFNETMASK,
		unix.SIOCGIFBRDADDR, unix.SIOCGIFDSTADDR:
	case unix.SIOCSIFFLAGS, unix.SIOCSIFMTU, unix.SIOCSIFADDR, unix.SIOCSIFNETMASK, unix.SIOCSIFBRDADDR,
		unix.SIOCSIFHWADDR, unix.SIOCSIFTXQLEN, unix.SIOCSIFNAME:
		if !t.Proc.Cred().Privileged() {
			return true, unix.EPERM
		}
		if req == unix.SIOCSIFFLAGS {
			return true, setIfFlags(t, arg)
		}
		return true, unix.EOPNOTSUPP // interfaces are configured at boot
	default:
		return false, nil
	}
	ifr := make([]byte, ifreqSize)
	if err := copyIn(t, arg, ifr); err != nil {
		return true, err
	}
	ifc, err := ifreqInterface(t.Kernel().Network, req, ifr)
	if err != nil {
		return true, err
	}
	u := ifr[ifreqUnion:]
	clear(u)
	switch req {
	case unix.SIOCGIFNAME:
		clear(ifr[:ifreqUnion])
		copy(ifr, ifc.Name)
		binary.LittleEndian.PutUint32(u, uint32(ifc.Index))
	case unix.SIOCGIFINDEX:
		binary.LittleEndian.PutUint32(u, uint32(ifc.Index))
	case unix.SIOCGIFFLAGS:
		binary.LittleEndian.PutUint16(u, uint16(ifc.Flags)) // ifr_flags is a short
	case unix.SIOCGIFMTU:
		binary.LittleEndian.PutUint32(u, ifc.MTU)
	case unix.SIOCGIFTXQLEN:
		binary.LittleEndian.PutUint32(u, ifc.TxQueueLen)
	case unix.SIOCGIFMETRIC, unix.SIOCGIFMAP: // metric 0, no device memory or IRQ shown
	case unix.SIOCGIFHWADDR:
		binary.LittleEndian.PutUint16(u, ifc.Type)
		copy(u[2:], ifc.MAC)
	default: // the IPv4 address calls
		a, ok := firstIPv4(ifc)
		if !ok {
			return true, unix.EADDRNOTAVAIL
		}
		binary.LittleEndian.PutUint16(u, unix.AF_INET)
		switch req {
		case unix.SIOCGIFADDR, unix.SIOCGIFDSTADDR:
			ip := a.Addr().As4()
			copy(u[4:], ip[:])
		case unix.SIOCGIFNETMASK:
			binary.BigEndian.PutUint32(u[4:], ^uint32(0)<<(32-a.Bits()))
		case unix.SIOCGIFBRDADDR: // none is configured: 0.0.0.0, as Linux reports it then
		}
	}
	return true, copyOut(t, arg, ifr)
}

// setIfFlags implements SIOCSIFFLAGS: asking for the flags an interface
// has (ifconfig lo up, ip link set lo up) succeeds; changing them is not
// supported.
func setIfFlags(t *kernel.Task, arg uint64) error {
	ifr := make([]byte, ifreqSize)
	if err := copyIn(t, arg, ifr); err != nil {
		return err
	}
	ifc, err := ifreqInterface(t.Kernel().Network, unix.SIOCSIFFLAGS, ifr)
	if err != nil {
		return err
	}
	return jnet.ChangeFlags(ifc, uint32(binary.LittleEndian.Uint16(ifr[ifreqUnion:])), 0xffff)
}

// ifreqInterface finds the interface of network an ifreq names: by index
// for SIOCGIFNAME, by name otherwise. ENODEV when there is none.
func ifreqInterface(network *jnet.Stack, req uint64, ifr []byte) (jnet.Interface, error) {
	index := int32(binary.LittleEndian.Uint32(ifr[ifreqUnion:]))
	name := ifr[:unix.IFNAMSIZ]
	if i := indexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	for _, ifc := range network.Interfaces() {
		if (req == unix.SIOCGIFNAME && ifc.Index == index) || (req != unix.SIOCGIFNAME && ifc.Name == string(name)) {
			return ifc, nil
		}
	}
	return jnet.Interface{}, unix.ENODEV
}

// firstIPv4 is the interface's first IPv4 address, the one the address
// ioctls report.
func firstIPv4(ifc jnet.Interface) (netip.Prefix, bool) {
	for _, a := range ifc.Addrs {
		if a.Prefix.Addr().Is4() {
			return a.Prefix, true
		}
	}
	return netip.Prefix{}, false
}

// ifconf implements SIOCGIFCONF: an ifreq (name and sockaddr_in) for
// every interface with an IPv4 address, as many as fit in ifc_len; with
// no buffer, the length all of them need.
func ifconf(t *kernel.Task, arg uint64) error {
	conf := make([]byte, ifconfSize)
	if err := copyIn(t, arg, conf); err != nil {
		return err
	}
	room := int(int32(binary.LittleEndian.Uint32(conf)))
	buf := binary.LittleEndian.Uint64(conf[8:])
	var out []byte
	for _, ifc := range t.Kernel().Network.Interfaces() {
		a, ok := firstIPv4(ifc)
		if !ok {
			continue
		}
		if buf != 0 && len(out)+ifreqSize > room {
			break
		}
		ifr := make([]byte, ifreqSize)
		copy(ifr, ifc.Name)
		binary.LittleEndian.PutUint16(ifr[ifreqUnion:], unix.AF_INET)
		ip := a.Addr().As4()
		copy(ifr[ifreqUnion+4:], ip[:])
		out = append(out, ifr...)
	}
	if buf != 0 {
		if err := copyOut(t, buf, out); err != nil {
			return err
		}
	}
	binary.LittleEndian.PutUint32(conf, uint32(len(out)))
	return copyOut(t, arg, conf[:4])
}
