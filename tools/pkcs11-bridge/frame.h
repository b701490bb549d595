/* The bridge's framing (docs/pkcs11-bridge.md): bounded readers and writers over one frame
 * body. Every read checks what is left; a failed read sets `bad` and yields zeros, so a handler
 * checks once at the end instead of after each field. */
#ifndef CARKEY_PKCS11_BRIDGE_FRAME_H
#define CARKEY_PKCS11_BRIDGE_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Hard caps, the same on both sides (PKCS11BridgeFrame.swift). */
#define BRIDGE_MAX_BODY 8192u
#define BRIDGE_MAX_BYTES 4096u
#define BRIDGE_MAX_ATTRIBUTES 16u
#define BRIDGE_MAX_ATTRIBUTE_LENGTH 1024u
#define BRIDGE_MAX_HANDLES 64u

typedef struct {
    const uint8_t *at;
    size_t left;
    int bad;
} reader_t;

typedef struct {
    uint8_t *base;
    size_t used;
    size_t capacity;
    int bad;
} writer_t;

typedef struct {
    uint64_t type;
    const uint8_t *value;
    uint32_t length;
} attribute_t;

typedef struct {
    attribute_t items[BRIDGE_MAX_ATTRIBUTES];
    uint32_t count;
} template_t;

uint8_t read_u8(reader_t *r);
uint32_t read_u32(reader_t *r);
uint64_t read_u64(reader_t *r);
/* A u32 length then that many bytes (at most `cap`); points into the frame, copies nothing. */
const uint8_t *read_bytes(reader_t *r, uint32_t cap, uint32_t *length);
void read_template(reader_t *r, template_t *t);
/* True when every field was read and nothing is left over. */
int read_finished(const reader_t *r);

void write_u8(writer_t *w, uint8_t value);
void write_u32(writer_t *w, uint32_t value);
void write_u64(writer_t *w, uint64_t value);
void write_bytes(writer_t *w, const uint8_t *value, size_t length);

#endif
