//go:build riscv64

package virtio

import "fmt"

// RNG is a virtio entropy device (virtio 1.2, section 5.4): one request
// queue of device-writable buffers.
type RNG struct {
	dev *Device
	q   *Queue
	buf Buffer
}

// OpenRNG initialises the entropy device at base.
func OpenRNG(base uintptr, irq int) (*RNG, error) {
	d, q, err := openOneQueue(base, irq)
	if err != nil {
		return nil, err
	}
	buf, err := NewBuffer()
	if err != nil {
		return nil, err
	}
	d.Start()
	return &RNG{dev: d, q: q, buf: buf}, nil
}

// Read fills p with entropy from the device, waiting for its interrupts.
func (r *RNG) Read(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		want := min(len(p)-done, r.buf.Size)
		if _, err := r.q.Submit(r.buf, want, true); err != nil {
			return done, err
		}
		var n int
		for {
			_, got, ok := r.q.Used()
			if ok {
				n = got
				break
			}
			r.dev.WaitInterrupt()
		}
		if n <= 0 || n > want {
			return done, fmt.Errorf("virtio-rng: device returned %d bytes for %d", n, want)
		}
		done += copy(p[done:], r.buf.Bytes()[:n])
	}
	return done, nil
}
