package kernel

import "sync"

// The system's names: uname's nodename and domainname, set by
// sethostname(2) and setdomainname(2) (one UTS namespace).
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

// UTSNames returns the host and domain names.
func (k *Kernel) UTSNames() (host, domain string) {
	k.uts.mu.Lock()
	defer k.uts.mu.Unlock()
	host, domain = Hostname, Domainname
	if k.uts.hostSet {
		host = k.uts.host
	}
	if k.uts.domSet {
		domain = k.uts.domain
	}
	return host, domain
}

// SetHostname sets the host name (at most 64 bytes, the caller checked).
func (k *Kernel) SetHostname(name string) {
	k.uts.mu.Lock()
	k.uts.host, k.uts.hostSet = name, true
	k.uts.mu.Unlock()
}

// SetDomainname sets the NIS domain name.
func (k *Kernel) SetDomainname(name string) {
	k.uts.mu.Lock()
	k.uts.domain, k.uts.domSet = name, true
	k.uts.mu.Unlock()
}
