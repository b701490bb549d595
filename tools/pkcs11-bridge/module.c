/* Loading the module and opening the logged-in session: the OPEN operation. Kept apart from the
 * per-call handlers because this is the part that decides which token, and with which PIN. */
#include "module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* One module, one session: the bridge serves one vault. */
CK_FUNCTION_LIST_PTR bridge_functions = NULL;
CK_SESSION_HANDLE bridge_session = CK_INVALID_HANDLE;
static int initialized_here = 0;

static void fail(writer_t *out, uint8_t failure, const char *detail) {
    write_u8(out, STATUS_BRIDGE);
    write_u8(out, failure);
    write_bytes(out, (const uint8_t *)detail, strlen(detail));
}

void reply_pkcs11(writer_t *out, CK_RV rv, const char *function) {
    write_u8(out, STATUS_PKCS11);
    write_u64(out, rv);
    write_bytes(out, (const uint8_t *)function, strlen(function));
}

static int load(const char *path, writer_t *out) {
    struct stat info;
    if (stat(path, &info) != 0 || !S_ISREG(info.st_mode)) {
        fail(out, FAIL_MODULE_MISSING, path);
        return 0;
    }
    /* RTLD_LOCAL: the module's own OpenSSL or tss2 stays out of the global namespace. Never
     * dlclose'd: modules register exit handlers that crash if their code was unmapped. */
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        fail(out, FAIL_MODULE_NOT_LOADABLE, reason ? reason : "dlopen failed");
        return 0;
    }
    CK_C_GetFunctionList get_list = (CK_C_GetFunctionList)dlsym(handle, "C_GetFunctionList");
    if (!get_list) {
        fail(out, FAIL_NOT_PKCS11, "no C_GetFunctionList");
        return 0;
    }
    CK_FUNCTION_LIST_PTR list = NULL;
    CK_RV rv = get_list(&list);
    if (rv != CKR_OK || !list) {
        reply_pkcs11(out, rv == CKR_OK ? CKR_GENERAL_ERROR : rv, "C_GetFunctionList");
        return 0;
    }
    if (list->version.major != 2) {
        char version[32];
        snprintf(version, sizeof version, "%u.%u", list->version.major, list->version.minor);
        fail(out, FAIL_UNSUPPORTED_VERSION, version);
        return 0;
    }
    CK_C_INITIALIZE_ARGS arguments;
    memset(&arguments, 0, sizeof arguments);
    arguments.flags = CKF_OS_LOCKING_OK;
    rv = list->C_Initialize(&arguments);
    if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        reply_pkcs11(out, rv, "C_Initialize");
        return 0;
    }
    initialized_here = rv == CKR_OK;
    bridge_functions = list;
    return 1;
}

/* A blank-padded fixed field, trailing blanks and NULs cut. */
static size_t trimmed(const CK_UTF8CHAR *field, size_t size) {
    while (size > 0 && (field[size - 1] == ' ' || field[size - 1] == 0)) size--;
    return size;
}

/* The slot whose present token carries `label`; else a TOKEN_NOT_FOUND answer listing the
 * initialised tokens present (SoftHSM keeps one blank slot for the next token: not named). */
static int find_slot(const uint8_t *label, uint32_t label_length, CK_SLOT_ID *found, CK_TOKEN_INFO *found_info,
                     writer_t *out) {
    CK_SLOT_ID slots[32];
    CK_ULONG count = 32;
    CK_RV rv = bridge_functions->C_GetSlotList(CK_TRUE, slots, &count);
    if (rv != CKR_OK) {
        reply_pkcs11(out, rv, "C_GetSlotList");
        return 0;
    }
    char seen[BRIDGE_MAX_BYTES];
    size_t seen_length = 0;
    for (CK_ULONG i = 0; i < count && i < 32; i++) {
        CK_TOKEN_INFO info;
        if (bridge_functions->C_GetTokenInfo(slots[i], &info) != CKR_OK) continue;
        size_t length = trimmed(info.label, sizeof info.label);
        if (length == label_length && memcmp(info.label, label, length) == 0) {
            *found = slots[i];
            *found_info = info;
            return 1;
        }
        if ((info.flags & CKF_TOKEN_INITIALIZED) && seen_length + length + 4 < sizeof seen) {
            if (seen_length) {
                memcpy(seen + seen_length, ", ", 2);
                seen_length += 2;
            }
            seen[seen_length++] = '"';
            memcpy(seen + seen_length, info.label, length);
            seen_length += length;
            seen[seen_length++] = '"';
        }
    }
    seen[seen_length] = 0;
    fail(out, FAIL_TOKEN_NOT_FOUND, seen);
    return 0;
}

void bridge_open(const char *module_path, reader_t *in, writer_t *out) {
    uint32_t label_length = 0, pin_length = 0;
    const uint8_t *label = read_bytes(in, BRIDGE_MAX_LABEL, &label_length);
    const uint8_t *pin = read_bytes(in, BRIDGE_MAX_PIN, &pin_length);
    if (!read_finished(in)) {
        fail(out, FAIL_MALFORMED, "OPEN");
        return;
    }
    if (bridge_session != CK_INVALID_HANDLE) {
        fail(out, FAIL_NOT_OPEN, "the session is already open");
        return;
    }
    if (!bridge_functions && !load(module_path, out)) return;
    CK_SLOT_ID slot;
    CK_TOKEN_INFO info;
    if (!find_slot(label, label_length, &slot, &info, out)) return;
    CK_SESSION_HANDLE session;
    /* Read/write: the identity and storage-wrap keys are created as token objects. */
    CK_RV rv = bridge_functions->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &session);
    if (rv != CKR_OK) {
        reply_pkcs11(out, rv, "C_OpenSession");
        return;
    }
    /* The PIN points into the request frame, which the caller wipes after this returns. */
    rv = bridge_functions->C_Login(session, CKU_USER, (CK_UTF8CHAR_PTR)pin, pin_length);
    if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
        bridge_functions->C_CloseSession(session);
        reply_pkcs11(out, rv, "C_Login");
        return;
    }
    bridge_session = session;
    write_u8(out, STATUS_OK);
    write_bytes(out, info.manufacturerID, trimmed(info.manufacturerID, sizeof info.manufacturerID));
    write_bytes(out, info.model, trimmed(info.model, sizeof info.model));
}

void bridge_close(void) {
    if (!bridge_functions) return;
    if (bridge_session != CK_INVALID_HANDLE) bridge_functions->C_CloseSession(bridge_session);
    bridge_session = CK_INVALID_HANDLE;
    if (initialized_here) bridge_functions->C_Finalize(NULL);
    bridge_functions = NULL;
}
