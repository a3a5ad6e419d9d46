package syscall

import (
	"bytes"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

// The interface ioctls (SIOCGIF*) that ifconfig, glibc's if_nametoindex
// and others make on any socket, on a linux.Ifreq.

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
	var ifr linux.Ifreq
	if err := copyInStruct(t, arg, &ifr); err != nil {
		return true, err
	}
	ifc, err := ifreqInterface(t.Kernel().Network, req, &ifr)
	if err != nil {
		return true, err
	}
	clear(ifr.Data[:])
	switch req {
	case unix.SIOCGIFNAME:
		clear(ifr.Name[:])
		copy(ifr.Name[:], ifc.Name)
		ifr.SetInt32(ifc.Index)
	case unix.SIOCGIFINDEX:
		ifr.SetInt32(ifc.Index)
	case unix.SIOCGIFFLAGS:
		ifr.SetFlags(uint16(ifc.Flags))
	case unix.SIOCGIFMTU:
		ifr.SetInt32(int32(ifc.MTU))
	case unix.SIOCGIFTXQLEN:
		ifr.SetInt32(int32(ifc.TxQueueLen))
	case unix.SIOCGIFMETRIC, unix.SIOCGIFMAP: // metric 0, no device memory or IRQ shown
	case unix.SIOCGIFHWADDR:
		ifr.SetHWAddr(ifc.Type, ifc.MAC)
	default: // the IPv4 address calls
		a, ok := firstIPv4(ifc)
		if !ok {
			return true, unix.EADDRNOTAVAIL
		}
		switch req {
		case unix.SIOCGIFADDR, unix.SIOCGIFDSTADDR:
			ifr.SetInet4(a.Addr().As4())
		case unix.SIOCGIFNETMASK:
			ifr.SetInet4(linux.Inet4Mask(a.Bits()))
		case unix.SIOCGIFBRDADDR: // none is configured: 0.0.0.0, as Linux reports it then
			ifr.SetInet4([4]byte{})
		}
	}
	return true, copyOutStruct(t, arg, ifr)
}

// setIfFlags implements SIOCSIFFLAGS: asking for the flags an interface
// has (ifconfig lo up, ip link set lo up) succeeds; changing them is not
// supported.
func setIfFlags(t *kernel.Task, arg uint64) error {
	var ifr linux.Ifreq
	if err := copyInStruct(t, arg, &ifr); err != nil {
		return err
	}
	ifc, err := ifreqInterface(t.Kernel().Network, unix.SIOCSIFFLAGS, &ifr)
	if err != nil {
		return err
	}
	return jnet.ChangeFlags(ifc, uint32(ifr.Flags()), 0xffff)
}

// ifreqInterface finds the interface of network an ifreq names: by index
// for SIOCGIFNAME, by name otherwise. ENODEV when there is none.
func ifreqInterface(network *jnet.Stack, req uint64, ifr *linux.Ifreq) (jnet.Interface, error) {
	index := ifr.Int32()
	name := ifr.Name[:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
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
	var conf linux.Ifconf
	if err := copyInStruct(t, arg, &conf); err != nil {
		return err
	}
	room, buf := int(conf.Len), conf.Buf
	var out []linux.Ifreq
	for _, ifc := range t.Kernel().Network.Interfaces() {
		a, ok := firstIPv4(ifc)
		if !ok {
			continue
		}
		if buf != 0 && (len(out)+1)*linux.SizeofIfreq > room {
			break
		}
		var ifr linux.Ifreq
		copy(ifr.Name[:], ifc.Name)
		ifr.SetInet4(a.Addr().As4())
		out = append(out, ifr)
	}
	if buf != 0 {
		if err := copyOutStructs(t, buf, out); err != nil {
			return err
		}
	}
	return copyOutStruct(t, arg, int32(len(out)*linux.SizeofIfreq)) // ifc_len
}
