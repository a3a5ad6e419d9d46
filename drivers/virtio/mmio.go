// Package virtio drives virtio devices over the virtio-mmio transport.
package virtio

import arch "github.com/jiege-go/jiege/arch/riscv64"

// virtio-mmio registers (virtio 1.2, section 4.2.2).
const (
	regMagic    = 0x000
	regVersion  = 0x004
	regDeviceID = 0x008
	magicValue  = 0x74726976 // "virt"
)

// Device IDs (virtio 1.2, section 5).
const (
	DeviceNet     = 1
	DeviceBlock   = 2
	DeviceConsole = 3
	DeviceRNG     = 4
)

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
