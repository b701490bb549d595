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

// spidev (Drivers/SPI): SPI_IOC_MESSAGE(n) and the SPI_IOC_WR_* requests are macros Swift cannot
// import. Appended after the guard above with its own guard so the block stands alone.
#ifndef OPENCARKEY_CSHIMS_SPI_H
#define OPENCARKEY_CSHIMS_SPI_H
#include <linux/spi/spidev.h>
#include <stdint.h>
#include <string.h>

static inline int ock_spi_set_mode(int fd, uint8_t mode) { return ioctl(fd, SPI_IOC_WR_MODE, &mode); }
static inline int ock_spi_set_bits_per_word(int fd, uint8_t bits) { return ioctl(fd, SPI_IOC_WR_BITS_PER_WORD, &bits); }
static inline int ock_spi_set_max_speed_hz(int fd, uint32_t hz) { return ioctl(fd, SPI_IOC_WR_MAX_SPEED_HZ, &hz); }

// One message, chip select held throughout (cs_change 0): `tx` clocked out, then `rx_len` bytes
// clocked in while zeros go out. One transfer when nothing is read, two otherwise.
static inline int ock_spi_write_then_read(int fd, const uint8_t *tx, uint32_t tx_len,
                                          uint8_t *rx, uint32_t rx_len, uint32_t speed_hz) {
    struct spi_ioc_transfer t[2];
    memset(t, 0, sizeof t);
    t[0].tx_buf = (uint64_t)(uintptr_t)tx; t[0].len = tx_len; t[0].speed_hz = speed_hz; t[0].bits_per_word = 8;
    t[1].rx_buf = (uint64_t)(uintptr_t)rx; t[1].len = rx_len; t[1].speed_hz = speed_hz; t[1].bits_per_word = 8;
    return rx_len == 0 ? ioctl(fd, SPI_IOC_MESSAGE(1), t) : ioctl(fd, SPI_IOC_MESSAGE(2), t);
}
#endif

// Thread names (SystemThread): pthread_setname_np needs _GNU_SOURCE and prctl(2) is variadic;
// PR_SET_NAME names the calling thread (at most 15 bytes, the kernel truncates).
#ifndef OPENCARKEY_CSHIMS_THREAD_NAME_H
#define OPENCARKEY_CSHIMS_THREAD_NAME_H
#include <sys/prctl.h>
static inline int ock_set_current_thread_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
static inline int ock_get_current_thread_name(char buffer[16]) { return prctl(PR_GET_NAME, buffer, 0, 0, 0); }
#endif
