package keys

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What fork, exec and exit do to the keyrings credentials hold, and the
// settings of /proc/sys/kernel/keys.

// Fork is the keyrings of a process fork makes from p's: the session
// keyring and request_key's destination are inherited, the process
// keyring is not (nor is the thread keyring: a new thread starts with
// none).
func (s *Set) Fork(p *ProcessRings) *ProcessRings {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &ProcessRings{session: p.session, reqKey: p.reqKey}
	if c.session != nil {
		s.get(c.session)
	}
	return c
}

// Exec drops the thread and process keyrings, private to the program
// that made them; the session keyring stays.
func (s *Set) Exec(t *ThreadRings, p *ProcessRings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(&t.thread)
	s.drop(&p.process)
}

// ExitThread drops a leaving thread's keyring.
func (s *Set) ExitThread(t *ThreadRings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(&t.thread)
}

// ExitProcess drops what an ended process's credentials held.
func (s *Set) ExitProcess(p *ProcessRings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(&p.process)
	s.drop(&p.session)
}

func (s *Set) drop(k **Key) {
	if *k != nil {
		s.put(*k)
		*k = nil
	}
}

// LimitNames are the files of /proc/sys/kernel/keys.
func (s *Set) LimitNames() []string {
	return []string{"gc_delay", "maxbytes", "maxkeys", "root_maxbytes", "root_maxkeys"}
}

func (s *Set) limit(name string) *int {
	switch name {
	case "gc_delay":
		return &s.limits.GCDelay
	case "maxbytes":
		return &s.limits.MaxBytes
	case "maxkeys":
		return &s.limits.MaxKeys
	case "root_maxbytes":
		return &s.limits.RootMaxBytes
	case "root_maxkeys":
		return &s.limits.RootMaxKeys
	}
	return nil
}

// Limit is one of LimitNames' values.
func (s *Set) Limit(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.limit(name); v != nil {
		return strconv.Itoa(*v)
	}
	return ""
}

// SetLimit writes one of LimitNames: EINVAL for what is not a number
// from 1 (0 for gc_delay) to INT_MAX, as Linux's proc_dointvec_minmax.
func (s *Set) SetLimit(name, value string) error {
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return nil
	}
	n, err := strconv.ParseInt(fields[0], 10, 32)
	lowest := int64(1)
	if name == "gc_delay" {
		lowest = 0
	}
	if err != nil || n < lowest {
		return unix.EINVAL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.limit(name)
	if v == nil {
		return unix.EINVAL
	}
	*v = int(n)
	return nil
}
