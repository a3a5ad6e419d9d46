package kernel

import "sync"

// A UTS namespace's names: uname's nodename and domainname, set by
// sethostname(2) and setdomainname(2).
type utsNames struct {
	mu              sync.Mutex
	host, domain    string
	hostSet, domSet bool // changed from the defaults
}

// Their values at boot.
const (
	Hostname   = "jiege"
	Domainname = "(none)"
)

// The release (the Linux ABI level the kernel follows) and the build's
// version, as uname(2), /proc/version and /proc/sys/kernel show them.
const (
	Release = "6.12.0-jiege"
	Version = "#1 Jiege-Go"
)

// UTSNames returns the host and domain names of the initial UTS
// namespace, which /proc/sys/kernel shows.
func (k *Kernel) UTSNames() (host, domain string) { return k.uts.names() }

// SetHostname sets the initial UTS namespace's host name.
func (k *Kernel) SetHostname(name string) { k.uts.setHost(name) }

// SetDomainname sets the initial UTS namespace's NIS domain name.
func (k *Kernel) SetDomainname(name string) { k.uts.setDomain(name) }
