package kernel

import "math/rand/v2"

// The kernel's random generator, behind getrandom(2) and AT_RANDOM: ChaCha8,
// seeded at boot from virtio-rng when the machine has one (SeedRandom), and
// until then from the Go runtime's own seed. It avoids crypto/rand, whose
// FIPS DRBG reserves 32 MiB of memory.

func seedFromRuntime() (seed [32]byte) {
	for i := 0; i < 32; i += 8 {
		v := rand.Uint64()
		for j := 0; j < 8; j++ {
			seed[i+j] = byte(v >> (8 * j))
		}
	}
	return seed
}

// SeedRandom reseeds the generator.
func (k *Kernel) SeedRandom(seed [32]byte) {
	k.randMu.Lock()
	k.randGen = rand.NewChaCha8(seed)
	k.randMu.Unlock()
}

// Random fills b with random bytes.
func (k *Kernel) Random(b []byte) {
	k.randMu.Lock()
	k.randGen.Read(b)
	k.randMu.Unlock()
}
