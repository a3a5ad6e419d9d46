//go:build riscv64

// Package virtio drives virtio devices over the virtio-mmio transport
// (virtio 1.2, modern interface only: QEMU needs
// -global virtio-mmio.force-legacy=false), with split virtqueues.
//
// Queues and buffers live in physical frames, which the kernel reaches at
// their physical addresses, so the device and the driver see one address.
// Interrupts arrive through arch.IRQ; the trap handler acknowledges them
// at the device (arch.EnableIRQAcked), so a driver only waits.
package virtio

import (
	"errors"
	"fmt"

	arch "github.com/jiege-go/jiege/arch/riscv64"
)

// virtio-mmio registers (virtio 1.2, section 4.2.2).
const (
	regMagic            = 0x000
	regVersion          = 0x004
	regDeviceID         = 0x008
	regDeviceFeatures   = 0x010
	regDeviceFeatSel    = 0x014
	regDriverFeatures   = 0x020
	regDriverFeatSel    = 0x024
	regQueueSel         = 0x030
	regQueueNumMax      = 0x034
	regQueueNum         = 0x038
	regQueueReady       = 0x044
	regQueueNotify      = 0x050
	regInterruptStatus  = 0x060
	regInterruptACK     = 0x064
	regStatus           = 0x070
	regQueueDescLow     = 0x080
	regQueueDescHigh    = 0x084
	regQueueDriverLow   = 0x090
	regQueueDriverHigh  = 0x094
	regQueueDeviceLow   = 0x0a0
	regQueueDeviceHigh  = 0x0a4
	magicValue          = 0x74726976 // "virt"
	statusAcknowledge   = 1
	statusDriver        = 2
	statusDriverOK      = 4
	statusFeaturesOK    = 8
	featureVersion1High = 1 << 0 // VIRTIO_F_VERSION_1 is feature bit 32
)

// Device IDs (virtio 1.2, section 5).
const (
	DeviceNet     = 1
	DeviceBlock   = 2
	DeviceConsole = 3
	DeviceRNG     = 4
)

// ErrLegacy reports a virtio-mmio version 1 (legacy) transport.
var ErrLegacy = errors.New("virtio-mmio: legacy (version 1) transport; run QEMU with -global virtio-mmio.force-legacy=false")

// Probe reports the device ID in the virtio-mmio slot at base, 0 for an
// empty slot; ok is false when no virtio-mmio transport answers there.
func Probe(base uintptr) (id uint32, ok bool) {
	if arch.Read32(base+regMagic) != magicValue {
		return 0, false
	}
	return arch.Read32(base + regDeviceID), true
}

// DeviceName names a virtio device ID.
func DeviceName(id uint32) string {
	switch id {
	case DeviceNet:
		return "network"
	case DeviceBlock:
		return "block"
	case DeviceConsole:
		return "console"
	case DeviceRNG:
		return "entropy"
	}
	return "unknown"
}

// Device is an initialised virtio-mmio device.
type Device struct {
	base   uintptr
	irq    *arch.IRQ
	irqNum int
}

// Open resets the device at base and negotiates features: VERSION_1 plus
// those of want (a bit mask over feature bits 0-31) that the device offers.
// Queues are set up with Queue before Start.
func Open(base uintptr, irq int, want uint32) (d *Device, features uint32, err error) {
	d = &Device{base: base, irqNum: irq}
	if arch.Read32(base+regMagic) != magicValue {
		return nil, 0, fmt.Errorf("virtio-mmio@%#x: no device", base)
	}
	if arch.Read32(base+regVersion) != 2 {
		return nil, 0, ErrLegacy
	}
	d.write(regStatus, 0)
	d.write(regStatus, statusAcknowledge)
	d.write(regStatus, statusAcknowledge|statusDriver)
	d.write(regDeviceFeatSel, 1)
	if d.read(regDeviceFeatures)&featureVersion1High == 0 {
		return nil, 0, fmt.Errorf("virtio-mmio@%#x: device lacks VIRTIO_F_VERSION_1", base)
	}
	d.write(regDeviceFeatSel, 0)
	got := d.read(regDeviceFeatures) & want
	d.write(regDriverFeatSel, 0)
	d.write(regDriverFeatures, got)
	d.write(regDriverFeatSel, 1)
	d.write(regDriverFeatures, featureVersion1High)
	d.write(regStatus, statusAcknowledge|statusDriver|statusFeaturesOK)
	if d.read(regStatus)&statusFeaturesOK == 0 {
		return nil, 0, fmt.Errorf("virtio-mmio@%#x: device refused features %#x", base, got)
	}
	arch.EnableIRQAcked(irq, base+regInterruptStatus, base+regInterruptACK)
	if d.irq, err = arch.OpenIRQ(irq); err != nil {
		return nil, 0, fmt.Errorf("virtio-mmio@%#x: %w", base, err)
	}
	return d, got, nil
}

// openOneQueue opens a device that has one request queue (block,
// entropy) with no optional features, and sets up that queue.
func openOneQueue(base uintptr, irq int) (*Device, *Queue, error) {
	d, _, err := Open(base, irq, 0)
	if err != nil {
		return nil, nil, err
	}
	q, err := d.Queue(0)
	if err != nil {
		return nil, nil, err
	}
	return d, q, nil
}

// Start tells the device the driver is ready.
func (d *Device) Start() {
	d.write(regStatus, statusAcknowledge|statusDriver|statusFeaturesOK|statusDriverOK)
}

// WaitInterrupt blocks until the device interrupts (the trap handler has
// acknowledged it).
func (d *Device) WaitInterrupt() { d.irq.Wait() }

func readConfig8(d *Device, off uintptr) byte { return arch.Read8(d.base + off) }

func (d *Device) read(reg uintptr) uint32     { return arch.Read32(d.base + reg) }
func (d *Device) write(reg uintptr, v uint32) { arch.Write32(d.base+reg, v) }
