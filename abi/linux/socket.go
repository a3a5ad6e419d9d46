package linux

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SockaddrInet4 is struct sockaddr_in; Port is in network byte order
// (Htons, Ntohs).
type SockaddrInet4 struct {
	Family uint16
	Port   uint16
	Addr   [4]byte
	_      [8]uint8
}

// SockaddrInet6 is struct sockaddr_in6; Port is in network byte order.
type SockaddrInet6 struct {
	Family   uint16
	Port     uint16
	Flowinfo uint32
	Addr     [16]byte
	ScopeID  uint32
}

// SizeofSockaddrInet6Min is SIN6_LEN_RFC2133, sockaddr_in6 without
// sin6_scope_id: the shortest one Linux accepts.
const SizeofSockaddrInet6Min = 24

// SockaddrUnix is struct sockaddr_un.
type SockaddrUnix struct {
	Family uint16
	Path   [108]byte
}

// SockaddrNetlink is struct sockaddr_nl.
type SockaddrNetlink struct {
	Family uint16
	_      uint16
	Pid    uint32
	Groups uint32
}

// Linger is struct linger (SO_LINGER).
type Linger struct {
	OnOff  int32
	Linger int32
}

// Msghdr is struct msghdr.
type Msghdr struct {
	Name       uint64
	Namelen    uint32
	_          uint32
	Iov        uint64
	Iovlen     uint64
	Control    uint64
	Controllen uint64
	Flags      int32
	_          uint32
}

// OffsetofMsghdrNamelen is offsetof(struct msghdr, msg_namelen): recvmsg
// stores the sender's length there.
const OffsetofMsghdrNamelen = uint64(unsafe.Offsetof(Msghdr{}.Namelen))

// Mmsghdr is struct mmsghdr: a msghdr, then msg_len, padded to 8 bytes.
type Mmsghdr struct {
	Hdr Msghdr
	Len uint32
	_   uint32
}

// OffsetofMmsghdrLen is offsetof(struct mmsghdr, msg_len).
const OffsetofMmsghdrLen = uint64(unsafe.Offsetof(Mmsghdr{}.Len))

// SizeofMmsghdr is sizeof(struct mmsghdr).
const SizeofMmsghdr = uint64(unsafe.Sizeof(Mmsghdr{}))

// Cmsghdr is struct cmsghdr; its data follows, aligned to 8 bytes.
type Cmsghdr struct {
	Len   uint64
	Level int32
	Type  int32
}

// SizeofCmsghdr is CMSG_LEN(0).
const SizeofCmsghdr = uint64(unsafe.Sizeof(Cmsghdr{}))

// CmsgAlign is CMSG_ALIGN: control messages follow one another at 8-byte
// boundaries.
func CmsgAlign(n uint64) uint64 { return (n + 7) &^ 7 }

// Ucred is struct ucred: SO_PEERCRED's value and SCM_CREDENTIALS' data.
type Ucred struct {
	Pid int32
	Uid uint32
	Gid uint32
}

// SizeofUcred is sizeof(struct ucred).
const SizeofUcred = uint64(unsafe.Sizeof(Ucred{}))

// Ifreq is struct ifreq: an interface's name, then a 24-byte union whose
// member each SIOC*IF* request picks, read and written by the methods.
type Ifreq struct {
	Name [16]byte
	Data [24]byte
}

// SizeofIfreq is sizeof(struct ifreq): SIOCGIFCONF's records.
const SizeofIfreq = int(unsafe.Sizeof(Ifreq{}))

// Int32 is the union's int: ifr_ifindex, ifr_mtu, ifr_qlen.
func (r *Ifreq) Int32() int32 {
	var v int32
	Decode(r.Data[:], &v)
	return v
}

// SetInt32 stores the union's int.
func (r *Ifreq) SetInt32(v int32) { copy(r.Data[:], AsBytes(&v)) }

// Flags is the union's ifr_flags, a short.
func (r *Ifreq) Flags() uint16 {
	var v uint16
	Decode(r.Data[:], &v)
	return v
}

// SetFlags stores ifr_flags.
func (r *Ifreq) SetFlags(v uint16) { copy(r.Data[:], AsBytes(&v)) }

// SetInet4 stores an AF_INET sockaddr: ifr_addr, ifr_netmask and the like.
func (r *Ifreq) SetInet4(addr [4]byte) {
	sa := SockaddrInet4{Family: unix.AF_INET, Addr: addr}
	copy(r.Data[:], AsBytes(&sa))
}

// SetHWAddr stores ifr_hwaddr: the link type as the family, then the
// hardware address.
func (r *Ifreq) SetHWAddr(linkType uint16, mac []byte) {
	copy(r.Data[:], AsBytes(&linkType))
	copy(r.Data[2:], mac)
}

// Ifconf is struct ifconf.
type Ifconf struct {
	Len int32
	_   int32
	Buf uint64
}
