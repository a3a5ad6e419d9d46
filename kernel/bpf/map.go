package bpf

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Map flags that a map of ours keeps: where it lives (one NUMA node
// here), how the syscall side's descriptor is opened, and what programs
// may do with its values. BPF_F_NO_PREALLOC changes nothing: a hash map's
// elements are made and charged as they are inserted either way.
const (
	arrayFlags  = unix.BPF_F_NUMA_NODE | accessFlags
	hashFlags   = unix.BPF_F_NO_PREALLOC | unix.BPF_F_NUMA_NODE | accessFlags
	accessFlags = unix.BPF_F_RDONLY | unix.BPF_F_WRONLY | unix.BPF_F_RDONLY_PROG | unix.BPF_F_WRONLY_PROG
)

// kmallocMax is Linux's KMALLOC_MAX_SIZE with 4 KiB pages: the largest
// array value, and the bound of a hash element's key and value.
const kmallocMax = 4 << 20

// mapCost is what a map is charged besides its elements; hashElemCost
// what a hash element is charged besides its key and value, as Linux's
// struct htab_elem.
const (
	mapCost      = 256
	hashElemCost = 48
)

// maxArrayBytes bounds an array's values where no budget does (host
// tests): past it creation is ENOMEM, as a failed vmalloc is.
const maxArrayBytes = 1 << 30

// MapSpec is what BPF_MAP_CREATE asks for.
type MapSpec struct {
	Type, KeySize, ValueSize, MaxEntries, Flags uint32
	NumaNode                                    uint32 // with BPF_F_NUMA_NODE
}

// Map is a BPF map (BPF_MAP_TYPE_ARRAY or BPF_MAP_TYPE_HASH), open as
// an anonymous inode "bpf-map". Its descriptors and the programs that
// name it hold references; the last one gives its charge back. Its
// values are memory programs read and write through the pointers
// map_lookup_elem gives them: an array's stay where they are, a hash
// element's value is replaced whole by an update, so a program holding
// the old one keeps memory nothing else reads, as Linux's RCU grace.
type Map struct {
	Type, KeySize, ValueSize, MaxEntries, Flags uint32

	ino  uint64
	refs atomic.Int64

	mu      sync.Mutex
	charged int    // guarded by mu; given back by the last DecRef
	values  []byte // an array's values, each elemSize apart
	// A hash map's elements by key, and in insertion order, the order
	// BPF_MAP_GET_NEXT_KEY walks them in.
	elems       map[string]*hashElem
	first, last *hashElem
}

type hashElem struct {
	key        string
	value      []byte
	prev, next *hashElem
}

// Check checks spec as Linux's map_create and the map type's
// alloc_check do: EINVAL for a type other than array and hash or a bad
// size or flag, E2BIG for a value too big.
func (spec MapSpec) Check() error {
	progAccess := uint32(unix.BPF_F_RDONLY_PROG | unix.BPF_F_WRONLY_PROG)
	switch {
	case spec.Flags&unix.BPF_F_RDONLY != 0 && spec.Flags&unix.BPF_F_WRONLY != 0:
		return unix.EINVAL
	case spec.Flags&unix.BPF_F_NUMA_NODE != 0 && spec.NumaNode != 0:
		return unix.EINVAL // one node, numbered 0
	case spec.Flags&progAccess == progAccess:
		return unix.EINVAL
	}
	switch spec.Type {
	case unix.BPF_MAP_TYPE_ARRAY:
		if spec.MaxEntries == 0 || spec.KeySize != 4 || spec.ValueSize == 0 || spec.Flags&^arrayFlags != 0 {
			return unix.EINVAL
		}
		if spec.ValueSize > kmallocMax {
			return unix.E2BIG
		}
	case unix.BPF_MAP_TYPE_HASH:
		if spec.Flags&^hashFlags != 0 || spec.MaxEntries == 0 || spec.KeySize == 0 || spec.ValueSize == 0 {
			return unix.EINVAL
		}
		if uint64(spec.KeySize)+uint64(spec.ValueSize) >= kmallocMax-hashElemCost {
			return unix.E2BIG
		}
	default:
		return unix.EINVAL
	}
	return nil
}

// NewMap makes the map spec asks for, with one reference: Check's
// errors, ENOMEM past mm.Charged. An array's values are all there, zero,
// from the start; a hash map's elements are charged as they come.
func NewMap(spec MapSpec) (*Map, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	m := &Map{Type: spec.Type, KeySize: spec.KeySize, ValueSize: spec.ValueSize, MaxEntries: spec.MaxEntries,
		Flags: spec.Flags, ino: fs.NewAnonIno(), charged: mapCost}
	if spec.Type == unix.BPF_MAP_TYPE_ARRAY {
		size := uint64(spec.MaxEntries) * uint64(m.elemSize())
		if size > maxArrayBytes {
			return nil, unix.ENOMEM
		}
		m.charged += int(size)
	} else {
		m.elems = map[string]*hashElem{}
	}
	if mm.Charged.Charge(m.charged) != nil {
		return nil, unix.ENOMEM
	}
	if spec.Type == unix.BPF_MAP_TYPE_ARRAY {
		m.values = make([]byte, int(spec.MaxEntries)*m.elemSize())
	}
	m.refs.Store(1)
	return m, nil
}

// elemSize is an array element's stride: values start 8-aligned.
func (m *Map) elemSize() int { return int(m.ValueSize+7) &^ 7 }

// hashElemCharge is what one hash element is charged.
func (m *Map) hashElemCharge() int {
	return hashElemCost + int(m.KeySize+7)&^7 + m.elemSize()
}

// IncRef takes a reference for a program that names m.
func (m *Map) IncRef() { m.refs.Add(1) }

// DecRef drops a reference; the last gives back m's charge.
func (m *Map) DecRef() {
	if m.refs.Add(-1) != 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mm.Charged.Uncharge(m.charged)
	m.charged = 0
	m.values, m.elems, m.first, m.last = nil, nil, nil, nil
}

// value returns the memory of the value key names, nil when there is
// none. m.mu is held.
func (m *Map) value(key []byte) []byte {
	if m.Type == unix.BPF_MAP_TYPE_ARRAY {
		i := binary.LittleEndian.Uint32(key)
		if i >= m.MaxEntries || m.values == nil {
			return nil
		}
		at := int(i) * m.elemSize()
		return m.values[at : at+int(m.ValueSize) : at+int(m.ValueSize)]
	}
	if e := m.elems[string(key)]; e != nil {
		return e.value
	}
	return nil
}

// Lookup copies the value key names into out (ValueSize bytes): ENOENT
// when there is none.
func (m *Map) Lookup(key, out []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.value(key)
	if v == nil {
		return unix.ENOENT
	}
	copy(out, v)
	return nil
}

// lookupValue is map_lookup_elem's answer to a program: the value's own
// memory, nil when there is none.
func (m *Map) lookupValue(key []byte) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value(key)
}

// Update stores value under key as flags ask (BPF_ANY, BPF_NOEXIST,
// BPF_EXIST): EINVAL for other flags, EEXIST or ENOENT when the
// element's presence is not what they ask, E2BIG for an index past an
// array or a new element in a full hash map, ENOMEM past mm.Charged.
func (m *Map) Update(key, value []byte, flags uint64) error {
	if flags > unix.BPF_EXIST {
		return unix.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Type == unix.BPF_MAP_TYPE_ARRAY {
		if binary.LittleEndian.Uint32(key) >= m.MaxEntries {
			return unix.E2BIG
		}
		if flags == unix.BPF_NOEXIST {
			return unix.EEXIST // every element of an array exists
		}
		copy(m.value(key), value)
		return nil
	}
	if m.elems == nil {
		return unix.ENOENT // released while a program ran
	}
	e := m.elems[string(key)]
	switch {
	case e != nil && flags == unix.BPF_NOEXIST:
		return unix.EEXIST
	case e == nil && flags == unix.BPF_EXIST:
		return unix.ENOENT
	case e != nil:
		e.value = m.newValue(value)
		return nil
	case len(m.elems) >= int(m.MaxEntries):
		return unix.E2BIG
	}
	if mm.Charged.Charge(m.hashElemCharge()) != nil {
		return unix.ENOMEM
	}
	m.charged += m.hashElemCharge()
	e = &hashElem{key: string(key), value: m.newValue(value), prev: m.last}
	if m.last != nil {
		m.last.next = e
	} else {
		m.first = e
	}
	m.last = e
	m.elems[e.key] = e
	return nil
}

// newValue is a hash element's value memory holding value: 8-aligned
// and a multiple of 8 long, as an array's.
func (m *Map) newValue(value []byte) []byte {
	b := make([]byte, m.elemSize())
	copy(b, value)
	return b[:m.ValueSize:m.ValueSize]
}

// Delete removes key's element: EINVAL for an array, whose elements
// always exist, ENOENT when there is none.
func (m *Map) Delete(key []byte) error {
	if m.Type == unix.BPF_MAP_TYPE_ARRAY {
		return unix.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.elems[string(key)]
	if e == nil {
		return unix.ENOENT
	}
	delete(m.elems, e.key)
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		m.first = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		m.last = e.prev
	}
	mm.Charged.Uncharge(m.hashElemCharge())
	m.charged -= m.hashElemCharge()
	return nil
}

// NextKey returns the key after key (nil: the first), as Linux's
// get_next_key: an array's index after it (0 after one out of range), a
// hash map's element inserted after it (the first when key is not
// there); ENOENT after the last.
func (m *Map) NextKey(key []byte) ([]byte, error) {
	if m.Type == unix.BPF_MAP_TYPE_ARRAY {
		i := uint32(0)
		if key != nil {
			i = binary.LittleEndian.Uint32(key)
			switch {
			case i >= m.MaxEntries:
				i = 0
			case i == m.MaxEntries-1:
				return nil, unix.ENOENT
			default:
				i++
			}
		}
		return binary.LittleEndian.AppendUint32(nil, i), nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.first
	if e := m.elems[string(key)]; key != nil && e != nil {
		next = e.next
	}
	if next == nil {
		return nil, unix.ENOENT
	}
	return []byte(next.key), nil
}

// ReadTo refuses: a map is read with bpf(2) (EINVAL, as Linux's
// bpf_dummy_read).
func (m *Map) ReadTo(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// WriteFrom refuses, as ReadTo.
func (m *Map) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// Stat is an anonymous inode's.
func (m *Map) Stat() fs.Stat { return fs.AnonStat(m.ino) }

// Path is what /proc/PID/fd shows.
func (m *Map) Path() string { return "anon_inode:bpf-map" }

// Close drops the descriptor's reference.
func (m *Map) Close() error {
	m.DecRef()
	return nil
}
