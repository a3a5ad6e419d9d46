package linux

// System V IPC structures as riscv64 (asm-generic, 64-bit) lays them out:
// the 64-bit versions (ipc64_perm and the *64_ds), which glibc asks for
// without the IPC_64 flag on new architectures.

// IpcPerm is struct ipc64_perm.
type IpcPerm struct {
	Key                  int32
	UID, GID, CUID, CGID uint32
	Mode                 uint32
	Seq                  uint16
	_                    uint16
	_                    uint32
	_                    [2]uint64
}

// ShmidDs is struct shmid64_ds.
type ShmidDs struct {
	Perm                IpcPerm
	Segsz               uint64
	Atime, Dtime, Ctime int64
	Cpid, Lpid          int32
	Nattch              uint64
	_                   [2]uint64
}

// SemidDs is struct semid64_ds.
type SemidDs struct {
	Perm         IpcPerm
	Otime, Ctime int64
	Nsems        uint64
	_            [2]uint64
}

// MsqidDs is struct msqid64_ds.
type MsqidDs struct {
	Perm                IpcPerm
	Stime, Rtime, Ctime int64
	Cbytes, Qnum        uint64
	Qbytes              uint64
	Lspid, Lrpid        int32
	_                   [2]uint64
}

// Sembuf is struct sembuf, one semaphore operation.
type Sembuf struct {
	Num uint16
	Op  int16
	Flg int16
}

// ShmInfo64 is struct shminfo64 (shmctl IPC_INFO).
type ShmInfo64 struct {
	Max, Min, Mni, Seg, All uint64
	_                       [4]uint64
}

// ShmInfo is struct shm_info (shmctl SHM_INFO).
type ShmInfo struct {
	UsedIDs                int32
	_                      int32
	Tot, RSS, Swp          uint64
	SwapAttempts, SwapSucc uint64
}

// Seminfo is struct seminfo (semctl IPC_INFO, SEM_INFO).
type Seminfo struct {
	Map, Mni, Mns, Mnu, Msl, Opm, Ume, Usz, Vmx, Aem int32
}

// Msginfo is struct msginfo (msgctl IPC_INFO, MSG_INFO).
type Msginfo struct {
	Pool, Map, Max, Mnb, Mni, Ssz, Tql int32
	Seg                                uint16
	_                                  uint16
}
