package linux

// NlMsghdr is struct nlmsghdr.
type NlMsghdr struct {
	Len   uint32
	Type  uint16
	Flags uint16
	Seq   uint32
	Pid   uint32
}

// IfInfomsg is struct ifinfomsg (RTM_*LINK).
type IfInfomsg struct {
	Family uint8
	_      uint8
	Type   uint16
	Index  int32
	Flags  uint32
	Change uint32
}

// IfAddrmsg is struct ifaddrmsg (RTM_*ADDR).
type IfAddrmsg struct {
	Family    uint8
	Prefixlen uint8
	Flags     uint8
	Scope     uint8
	Index     uint32
}

// IfaCacheinfo is struct ifa_cacheinfo: lifetimes in seconds, times in
// hundredths of a second since boot.
type IfaCacheinfo struct {
	Prefered uint32
	Valid    uint32
	Cstamp   uint32
	Tstamp   uint32
}

// RtMsg is struct rtmsg (RTM_*ROUTE).
type RtMsg struct {
	Family   uint8
	DstLen   uint8
	SrcLen   uint8
	Tos      uint8
	Table    uint8
	Protocol uint8
	Scope    uint8
	Type     uint8
	Flags    uint32
}

// RtAttr is struct rtattr; its data follows, the whole padded to 4 bytes.
type RtAttr struct {
	Len  uint16
	Type uint16
}

// RtnlLinkStats64 is struct rtnl_link_stats64 as Linux 6.12 has it (25
// counters); packets and bytes first.
type RtnlLinkStats64 struct {
	RxPackets, TxPackets, RxBytes, TxBytes uint64
	_                                      [21]uint64
}

// RtnlLinkStats is struct rtnl_link_stats (24 counters).
type RtnlLinkStats struct {
	RxPackets, TxPackets, RxBytes, TxBytes uint32
	_                                      [20]uint32
}
