// The sync-counting VFS (see include/SyncCountingVFS.h). Every file it opens is the base VFS's
// file with a small header in front: the header's methods forward to the real file and count
// on the way. Nothing is cached or reordered, so the durability of the base VFS is unchanged.
#include "SyncCountingVFS.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

typedef struct CountingFile {
    sqlite3_file base;   // must be first: SQLite sees this
    sqlite3_file *real;  // the base VFS's file, allocated right after this header
    int is_wal;
} CountingFile;

static sqlite3_vfs counting_vfs;
static sqlite3_vfs *base_vfs;
// One table per io_methods version the base may report, so SQLite never calls a method the
// real file lacks (version 1 has no shared memory, version 2 no memory-mapped fetch).
static sqlite3_io_methods counting_methods[3];

static _Atomic uint64_t syncs, wal_syncs, sync_nanos, bytes_written, writes;
static _Atomic uint32_t delay_us;

#define REAL(file) (((CountingFile *)(file))->real)

static uint64_t monotonic_nanos(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// A timer sleep (no polling); resumed after a signal so the delay is what was asked for.
static void sleep_micros(uint32_t micros) {
    struct timespec left = { .tv_sec = micros / 1000000u, .tv_nsec = (long)(micros % 1000000u) * 1000 };
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
}

static int c_close(sqlite3_file *f) {
    sqlite3_file *real = REAL(f);
    int rc = real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
    f->pMethods = NULL;
    return rc;
}
static int c_read(sqlite3_file *f, void *buf, int amount, sqlite3_int64 offset) {
    return REAL(f)->pMethods->xRead(REAL(f), buf, amount, offset);
}
static int c_write(sqlite3_file *f, const void *buf, int amount, sqlite3_int64 offset) {
    atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes_written, (uint64_t)amount, memory_order_relaxed);
    return REAL(f)->pMethods->xWrite(REAL(f), buf, amount, offset);
}
static int c_truncate(sqlite3_file *f, sqlite3_int64 size) {
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int c_sync(sqlite3_file *f, int flags) {
    uint64_t start = monotonic_nanos();
    int rc = REAL(f)->pMethods->xSync(REAL(f), flags);
    uint32_t delay = atomic_load_explicit(&delay_us, memory_order_relaxed);
    // After the real sync, as a slow medium would be: the data is down only when we return.
    if (delay > 0) sleep_micros(delay);
    atomic_fetch_add_explicit(&syncs, 1, memory_order_relaxed);
    if (((CountingFile *)f)->is_wal) atomic_fetch_add_explicit(&wal_syncs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sync_nanos, monotonic_nanos() - start, memory_order_relaxed);
    return rc;
}
static int c_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int c_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int c_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int c_check_reserved(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int c_file_control(sqlite3_file *f, int op, void *arg) {
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int c_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int c_device_characteristics(sqlite3_file *f) {
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int c_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int c_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void c_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int c_shm_unmap(sqlite3_file *f, int delete_flag) {
    return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag);
}
static int c_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}
static int c_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *p) {
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, p);
}

static int v_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    CountingFile *file = (CountingFile *)f;
    file->real = (sqlite3_file *)(file + 1);
    file->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
    int rc = base_vfs->xOpen(base_vfs, name, file->real, flags, out_flags);
    // SQLite calls xClose whenever pMethods is set, even after a failed open: mirror the base.
    const sqlite3_io_methods *real = file->real->pMethods;
    if (real == NULL) {
        f->pMethods = NULL;
    } else {
        int version = real->iVersion < 1 ? 1 : (real->iVersion > 3 ? 3 : real->iVersion);
        f->pMethods = &counting_methods[version - 1];
    }
    return rc;
}

// The rest of the VFS forwards to the base with the base's own handle.
static int v_delete(sqlite3_vfs *v, const char *name, int dir_sync) {
    (void)v; return base_vfs->xDelete(base_vfs, name, dir_sync);
}
static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out) {
    (void)v; return base_vfs->xAccess(base_vfs, name, flags, out);
}
static int v_full_pathname(sqlite3_vfs *v, const char *name, int size, char *out) {
    (void)v; return base_vfs->xFullPathname(base_vfs, name, size, out);
}
static void *v_dl_open(sqlite3_vfs *v, const char *name) { (void)v; return base_vfs->xDlOpen(base_vfs, name); }
static void v_dl_error(sqlite3_vfs *v, int size, char *out) { (void)v; base_vfs->xDlError(base_vfs, size, out); }
static void (*v_dl_sym(sqlite3_vfs *v, void *handle, const char *symbol))(void) {
    (void)v; return base_vfs->xDlSym(base_vfs, handle, symbol);
}
static void v_dl_close(sqlite3_vfs *v, void *handle) { (void)v; base_vfs->xDlClose(base_vfs, handle); }
static int v_randomness(sqlite3_vfs *v, int size, char *out) { (void)v; return base_vfs->xRandomness(base_vfs, size, out); }
static int v_sleep(sqlite3_vfs *v, int micros) { (void)v; return base_vfs->xSleep(base_vfs, micros); }
static int v_current_time(sqlite3_vfs *v, double *out) { (void)v; return base_vfs->xCurrentTime(base_vfs, out); }
static int v_get_last_error(sqlite3_vfs *v, int size, char *out) {
    (void)v; return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, size, out) : 0;
}
static int v_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v; return base_vfs->xCurrentTimeInt64(base_vfs, out);
}
static int v_set_system_call(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr call) {
    (void)v; return base_vfs->xSetSystemCall(base_vfs, name, call);
}
static sqlite3_syscall_ptr v_get_system_call(sqlite3_vfs *v, const char *name) {
    (void)v; return base_vfs->xGetSystemCall(base_vfs, name);
}
static const char *v_next_system_call(sqlite3_vfs *v, const char *name) {
    (void)v; return base_vfs->xNextSystemCall(base_vfs, name);
}

static int install_once(void) {
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (base == NULL) return SQLITE_ERROR;
    if (strcmp(base->zName, OCK_SYNC_VFS_NAME) == 0) return SQLITE_OK;
    base_vfs = base;
    for (int i = 0; i < 3; i++) {
        counting_methods[i] = (sqlite3_io_methods){
            .iVersion = i + 1, .xClose = c_close, .xRead = c_read, .xWrite = c_write,
            .xTruncate = c_truncate, .xSync = c_sync, .xFileSize = c_file_size, .xLock = c_lock,
            .xUnlock = c_unlock, .xCheckReservedLock = c_check_reserved, .xFileControl = c_file_control,
            .xSectorSize = c_sector_size, .xDeviceCharacteristics = c_device_characteristics,
        };
        if (i >= 1) {
            counting_methods[i].xShmMap = c_shm_map;
            counting_methods[i].xShmLock = c_shm_lock;
            counting_methods[i].xShmBarrier = c_shm_barrier;
            counting_methods[i].xShmUnmap = c_shm_unmap;
        }
        if (i >= 2) {
            counting_methods[i].xFetch = c_fetch;
            counting_methods[i].xUnfetch = c_unfetch;
        }
    }
    // The base's version decides which optional entry points exist; only those are offered.
    counting_vfs = (sqlite3_vfs){
        .iVersion = base->iVersion, .szOsFile = (int)sizeof(CountingFile) + base->szOsFile,
        .mxPathname = base->mxPathname, .zName = OCK_SYNC_VFS_NAME, .pAppData = base,
        .xOpen = v_open, .xDelete = v_delete, .xAccess = v_access, .xFullPathname = v_full_pathname,
        .xDlOpen = base->xDlOpen ? v_dl_open : NULL, .xDlError = base->xDlError ? v_dl_error : NULL,
        .xDlSym = base->xDlSym ? v_dl_sym : NULL, .xDlClose = base->xDlClose ? v_dl_close : NULL,
        .xRandomness = v_randomness, .xSleep = v_sleep, .xCurrentTime = v_current_time,
        .xGetLastError = v_get_last_error,
    };
    if (base->iVersion >= 2) counting_vfs.xCurrentTimeInt64 = v_current_time_int64;
    if (base->iVersion >= 3) {
        counting_vfs.xSetSystemCall = base->xSetSystemCall ? v_set_system_call : NULL;
        counting_vfs.xGetSystemCall = base->xGetSystemCall ? v_get_system_call : NULL;
        counting_vfs.xNextSystemCall = base->xNextSystemCall ? v_next_system_call : NULL;
    }
    return sqlite3_vfs_register(&counting_vfs, 1);
}

int ock_sync_vfs_install(void) {
    // Callers (Swift) serialise the first call through a lazy global; the flag makes any
    // later call cheap and idempotent.
    static _Atomic int result = -1;
    int done = atomic_load(&result);
    if (done >= 0) return done;
    int rc = install_once();
    atomic_store(&result, rc);
    return rc;
}

ock_sync_counters ock_sync_vfs_counters(void) {
    return (ock_sync_counters){
        .syncs = atomic_load_explicit(&syncs, memory_order_relaxed),
        .wal_syncs = atomic_load_explicit(&wal_syncs, memory_order_relaxed),
        .sync_nanos = atomic_load_explicit(&sync_nanos, memory_order_relaxed),
        .bytes_written = atomic_load_explicit(&bytes_written, memory_order_relaxed),
        .writes = atomic_load_explicit(&writes, memory_order_relaxed),
    };
}

void ock_sync_vfs_set_delay_us(uint32_t microseconds) {
    atomic_store_explicit(&delay_us, microseconds, memory_order_relaxed);
}

uint32_t ock_sync_vfs_delay_us(void) { return atomic_load_explicit(&delay_us, memory_order_relaxed); }
