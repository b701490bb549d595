// Static-inline helpers for C macros and variadic functions that Swift cannot import.
// Each helper is one line around the macro it replaces; no logic lives in this header.
#ifndef OPENCARKEY_CSHIMS_H
#define OPENCARKEY_CSHIMS_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <sqlite3.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <termios.h>
#include <sys/timex.h>  // adjtimex(2): struct timex and STA_* are not in Swift's Glibc module
// The one piece of real C logic in this target (an SQLite VFS cannot be written in Swift
// without C function-pointer tables): sync_counting_vfs.c.
#include "SyncCountingVFS.h"

// OPENSSL_free is a macro over CRYPTO_free carrying __FILE__/__LINE__.
static inline void ock_openssl_free(void *p) { OPENSSL_free(p); }

// SQLITE_TRANSIENT is a cast of -1 to a function pointer: sqlite copies the buffer.
static inline sqlite3_destructor_type ock_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// open(2) and ioctl(2) are variadic in C.
static inline int ock_open(const char *path, int flags, unsigned int mode) { return open(path, flags, (mode_t)mode); }
static inline int ock_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

// eventfd(2) (sys/eventfd.h is not in Swift's Glibc module): a non-blocking, close-on-exec
// counter a poll loop sleeps on (EventCounter).
#include <sys/eventfd.h>
static inline int ock_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

#endif
