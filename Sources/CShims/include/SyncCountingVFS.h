// A thin SQLite VFS over the platform's default one ("unix") that counts what durability
// costs: xSync calls, the time spent in them and the bytes written. It can also add a fixed
// delay after every xSync, so a benchmark on a fast disk can behave like an SD card (2-10 ms
// per fsync). Counting is always on (relaxed atomic adds, nothing else); the delay is zero
// unless a benchmark sets it.
#ifndef OPENCARKEY_SYNC_COUNTING_VFS_H
#define OPENCARKEY_SYNC_COUNTING_VFS_H

#include <stdint.h>

/// The name the wrapper registers under.
#define OCK_SYNC_VFS_NAME "ock-sync-counting"

/// Cumulative counters since the process started (all databases of the process).
typedef struct ock_sync_counters {
    uint64_t syncs;          // xSync calls on any file (WAL, main database, journals)
    uint64_t wal_syncs;      // of which on a WAL file
    uint64_t sync_nanos;     // monotonic time spent inside xSync, the added delay included
    uint64_t bytes_written;  // bytes passed to xWrite
    uint64_t writes;         // xWrite calls
} ock_sync_counters;

/// Registers the wrapper over the current default VFS and makes it the default (once per
/// process; later calls return the first result). SQLITE_OK or an SQLite error code.
int ock_sync_vfs_install(void);

/// A consistent-enough snapshot (each field read atomically; fields may be one sync apart).
ock_sync_counters ock_sync_vfs_counters(void);

/// Microseconds to sleep after every xSync from now on (0: none). For benchmarks only.
void ock_sync_vfs_set_delay_us(uint32_t microseconds);
uint32_t ock_sync_vfs_delay_us(void);

#endif
