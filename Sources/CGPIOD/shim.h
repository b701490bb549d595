// One small C API over libgpiod 1.x and 2.x, so the Swift backend (LibgpiodBackend) is written
// once. Debian 12 and Raspberry Pi OS 12 ship libgpiod 1.6; Debian 13, current Yocto and the
// trixie SDK ship 2.x, whose API is different. The header being compiled decides: only the v1
// header defines GPIOD_LINE_BULK_MAX_LINES. Swift cannot test a C macro in `#if`, and a
// compilation condition would need a flag from outside (wrong when cross-compiling against an
// SDK sysroot whose libgpiod differs from the build machine's), so the choice is made here,
// by the preprocessor, from the same header the library that gets linked was installed with.
//
// Every function is a mechanical translation; policy (fallbacks, errors, chip lookup) stays in
// Swift so it is the same for both. Failures return -1 or NULL with errno set by libgpiod.
#ifndef OPENCARKEY_CGPIOD_SHIM_H
#define OPENCARKEY_CGPIOD_SHIM_H

#include <gpiod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

// What a request asks for.
#define OCK_GPIOD_OUTPUT 0       // output, first level inactive, set with the direction
#define OCK_GPIOD_INPUT_EDGES 1  // input reporting both edges on its descriptor
#define OCK_GPIOD_INPUT 2        // plain input (sampled)

#define OCK_GPIOD_BIAS_AS_IS 0
#define OCK_GPIOD_BIAS_DISABLED 1
#define OCK_GPIOD_BIAS_PULL_UP 2
#define OCK_GPIOD_BIAS_PULL_DOWN 3

#define OCK_GPIOD_DRIVE_PUSH_PULL 0
#define OCK_GPIOD_DRIVE_OPEN_DRAIN 1
#define OCK_GPIOD_DRIVE_OPEN_SOURCE 2

// Edge events read per call of ock_gpiod_read_edges (the kernel queues 16 per line in v1).
#define OCK_GPIOD_EDGE_BATCH 16

// One requested line: a struct gpiod_line (v1) or a struct gpiod_line_request (v2), cast.
struct ock_gpiod_request;

static inline void ock_gpiod_copy(char *buffer, size_t size, const char *text) {
    if (size > 0) snprintf(buffer, size, "%s", text ? text : "");
}

#ifdef GPIOD_LINE_BULK_MAX_LINES
#include "gpiod_v1.h"
#else
#include "gpiod_v2.h"
#endif

#endif
