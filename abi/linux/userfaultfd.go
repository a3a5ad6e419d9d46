package linux

// The ioctl arguments of a userfaultfd (linux/userfaultfd.h).

// UffdioAPI is struct uffdio_api.
type UffdioAPI struct {
	API      uint64
	Features uint64
	Ioctls   uint64
}

// UffdioRange is struct uffdio_range.
type UffdioRange struct {
	Start uint64
	Len   uint64
}

// UffdioRegister is struct uffdio_register.
type UffdioRegister struct {
	Range  UffdioRange
	Mode   uint64
	Ioctls uint64
}

// UffdioCopy is struct uffdio_copy, and struct uffdio_move, alike.
type UffdioCopy struct {
	Dst  uint64
	Src  uint64
	Len  uint64
	Mode uint64
	Copy int64
}

// UffdioZeropage is struct uffdio_zeropage, and struct uffdio_poison,
// alike.
type UffdioZeropage struct {
	Range    UffdioRange
	Mode     uint64
	Zeropage int64
}
