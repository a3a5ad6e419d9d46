package net

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Filter is a program attached to a socket (SO_ATTACH_BPF): it sees each
// datagram the socket receives and says how many of its bytes to keep, 0
// to drop it, as Linux's sk_filter. The socket holds a reference.
type Filter interface {
	Filter(datagram []byte) uint32
	DecRef()
}

// FilterSocket is a socket that runs a filter on what it receives: a
// Unix datagram socket.
type FilterSocket interface {
	// AttachFilter puts f in place of the socket's filter, taking the
	// caller's reference.
	AttachFilter(f Filter)
	// DetachFilter drops the filter (SO_DETACH_BPF): ENOENT when there
	// is none.
	DetachFilter() error
}

// filterSlot is a socket's filter, if any.
type filterSlot struct {
	mu sync.Mutex
	f  Filter
}

// AttachFilter replaces the filter with f.
func (s *filterSlot) AttachFilter(f Filter) {
	s.mu.Lock()
	old := s.f
	s.f = f
	s.mu.Unlock()
	if old != nil {
		old.DecRef()
	}
}

// DetachFilter drops the filter: ENOENT without one.
func (s *filterSlot) DetachFilter() error {
	s.mu.Lock()
	old := s.f
	s.f = nil
	s.mu.Unlock()
	if old == nil {
		return unix.ENOENT
	}
	old.DecRef()
	return nil
}

// run filters a datagram: what of it to keep, or ok false to drop it.
func (s *filterSlot) run(b []byte) ([]byte, bool) {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f == nil {
		return b, true
	}
	n := f.Filter(b)
	if n == 0 {
		return nil, false
	}
	return b[:min(int(n), len(b))], true
}
