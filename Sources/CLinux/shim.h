// Linux calls and flags Swift's Glibc module does not show (glibc declares sync_file_range and O_DIRECT only under
// _GNU_SOURCE, and the module does not include <malloc.h>).
#ifndef FERRY_CLINUX_SHIM_H
#define FERRY_CLINUX_SHIM_H
#include <stdint.h>
#include <malloc.h>  /* malloc_trim: hand freed heap memory back after recovery */
#include <fcntl.h>

/// `O_DIRECT` (glibc shows it only under _GNU_SOURCE; `__O_DIRECT` is the architecture's value either way).
static inline int ferry_o_direct(void) {
    return __O_DIRECT;
}

extern int sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags);

/// Starts write-back of the file's dirty pages in [offset, offset + nbytes) (nbytes 0: to the end) without
/// waiting for it: `sync_file_range(SYNC_FILE_RANGE_WRITE)`. Makes nothing durable; a later fsync still must.
static inline int ferry_start_writeback(int fd, int64_t offset, int64_t nbytes) {
    return sync_file_range(fd, offset, nbytes, 2 /* SYNC_FILE_RANGE_WRITE */);
}

/// Writes back the file's dirty pages in [offset, offset + nbytes) and waits until they are on the device:
/// `sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)`. Makes no
/// metadata durable (a later fsync still must); bounds how much of a file written through the page cache is dirty.
static inline int ferry_wait_writeback(int fd, int64_t offset, int64_t nbytes) {
    return sync_file_range(fd, offset, nbytes, 1 | 2 | 4);
}
#endif
