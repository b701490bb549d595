/* carkey-pkcs11-bridge MODULE: loads one PKCS#11 module in its own dynamically linked process
 * and answers the agent's requests over stdin/stdout (docs/pkcs11-bridge.md). The agent is a
 * fully static executable, which cannot dlopen a module safely (two libcs in one process).
 *
 * It serves only its parent: stdin and stdout must be pipes, every other descriptor is closed,
 * it exits when stdin closes and is killed when its parent dies (PR_SET_PDEATHSIG). The PIN
 * arrives in a request frame, never argv or the environment, and every frame is wiped once
 * handled. Exit status: 0 stdin closed, 2 usage, 3 a malformed frame header or I/O error. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "calls.h"

/* Reads exactly n bytes; 0 on end of file or error. */
static int read_all(uint8_t *buffer, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t got = read(STDIN_FILENO, buffer + done, n - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        done += (size_t)got;
    }
    return 1;
}

/* Where answers go: the agent's pipe, moved off descriptor 1 so that a module printing to
 * stdout lands on stderr instead of corrupting the framing. */
static int answer_fd = -1;

static int write_all(const uint8_t *buffer, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t put = write(answer_fd, buffer + done, n - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return 0;
        done += (size_t)put;
    }
    return 1;
}

/* The agent's unit grants it CAP_NET_ADMIN and CAP_NET_RAW as ambient capabilities (for the
 * Bluetooth adapter), which an exec keeps: a module loader needs neither. Dropped, and no exec
 * from here on may gain privileges. Left alone when running as root (tests, development): root's
 * file access does not come from ambient capabilities. */
static int drop_capabilities(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 0;
    if (getuid() == 0) return 1;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return 0;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    return syscall(SYS_capset, &header, none) == 0;
}

static int is_pipe(int fd) {
    struct stat info;
    return fstat(fd, &info) == 0 && S_ISFIFO(info.st_mode);
}

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] != '/') {
        fprintf(stderr, "usage: carkey-pkcs11-bridge /absolute/path/to/module.so (started by carkey-agent)\n");
        return 2;
    }
    /* Never outlive the agent: killed when the parent dies even while busy in the module.
     * (The signal follows the thread that started us; the agent starts bridges from its main
     * thread, or from the thread whose call restarts a dead one. The end of file on stdin below
     * is the process-wide signal: our stdin's write end is the agent's, close-on-exec.) If the
     * parent is already gone (reparented to init), stop now. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 0;
    /* The agent's pipes only: a terminal or a socket is someone else. */
    if (!is_pipe(STDIN_FILENO) || !is_pipe(STDOUT_FILENO)) {
        fprintf(stderr, "carkey-pkcs11-bridge: stdin and stdout must be the agent's pipes\n");
        return 2;
    }
    /* Nothing inherited beyond stdio reaches the module. */
    for (int fd = 3; fd < 1024; fd++) close(fd);
    answer_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (answer_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 3;
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_DUMPABLE, 0);
    if (!drop_capabilities()) {
        fprintf(stderr, "carkey-pkcs11-bridge: cannot drop the capabilities inherited from the agent\n");
        return 2;
    }

    static uint8_t request[BRIDGE_MAX_BODY];
    static uint8_t answer[4 + BRIDGE_MAX_BODY];
    int status = 0;
    for (;;) {
        uint8_t header[4];
        if (!read_all(header, 4)) break;
        uint32_t length = ((uint32_t)header[0] << 24) | ((uint32_t)header[1] << 16) | ((uint32_t)header[2] << 8) | header[3];
        /* A length out of bounds means the stream cannot be trusted any further. */
        if (length == 0 || length > BRIDGE_MAX_BODY || !read_all(request, length)) {
            status = 3;
            break;
        }
        reader_t in = {request + 1, length - 1, 0};
        writer_t out = {answer + 4, 0, BRIDGE_MAX_BODY, 0};
        if (request[0] == OP_OPEN) {
            bridge_open(argv[1], &in, &out);
        } else {
            bridge_call(request[0], &in, &out);
        }
        explicit_bzero(request, length);
        int written = 0;
        if (!out.bad) {
            answer[0] = (uint8_t)(out.used >> 24);
            answer[1] = (uint8_t)(out.used >> 16);
            answer[2] = (uint8_t)(out.used >> 8);
            answer[3] = (uint8_t)out.used;
            written = write_all(answer, 4 + out.used);
        }
        explicit_bzero(answer, sizeof answer);
        if (!written) {
            status = 3;
            break;
        }
    }
    bridge_close();
    return status;
}
