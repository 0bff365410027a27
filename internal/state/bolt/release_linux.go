package bolt

import "golang.org/x/sys/unix"

// release tells the kernel that the size bytes mapped at data are not
// needed now (MADV_DONTNEED). bbolt maps its file read-only and shared, so
// this only drops the process's page-table entries: the data stays in the
// page cache, and the next read of a page faults it back in, unchanged.
// What the process's RSS counted of the file falls back to what is read
// after. A failure only leaves the pages resident, so it is ignored.
//
// The raw system call takes the address as the uintptr bbolt reports,
// without turning it back into a pointer.
func release(data uintptr, size int64) {
	if data == 0 || size <= 0 {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, data, uintptr(size), unix.MADV_DONTNEED)
}
