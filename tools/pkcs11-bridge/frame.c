/* Bounded big-endian field readers and writers (docs/pkcs11-bridge.md, "Fields"). */
#include "frame.h"

#include <string.h>

static int take(reader_t *r, size_t n) {
    if (r->bad || r->left < n) {
        r->bad = 1;
        return 0;
    }
    return 1;
}

uint8_t read_u8(reader_t *r) {
    if (!take(r, 1)) return 0;
    uint8_t value = r->at[0];
    r->at += 1;
    r->left -= 1;
    return value;
}

uint32_t read_u32(reader_t *r) {
    if (!take(r, 4)) return 0;
    uint32_t value = ((uint32_t)r->at[0] << 24) | ((uint32_t)r->at[1] << 16) | ((uint32_t)r->at[2] << 8) | r->at[3];
    r->at += 4;
    r->left -= 4;
    return value;
}

uint64_t read_u64(reader_t *r) {
    uint64_t high = read_u32(r);
    uint64_t low = read_u32(r);
    return (high << 32) | low;
}

const uint8_t *read_bytes(reader_t *r, uint32_t cap, uint32_t *length) {
    uint32_t n = read_u32(r);
    *length = 0;
    if (r->bad) return NULL;
    if (n > cap || !take(r, n)) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *value = r->at;
    r->at += n;
    r->left -= n;
    *length = n;
    return value;
}

void read_template(reader_t *r, template_t *t) {
    t->count = 0;
    uint32_t count = read_u32(r);
    if (r->bad) return;
    if (count > BRIDGE_MAX_ATTRIBUTES) {
        r->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        t->items[i].type = read_u64(r);
        t->items[i].value = read_bytes(r, BRIDGE_MAX_ATTRIBUTE_LENGTH, &t->items[i].length);
        if (r->bad) return;
    }
    t->count = count;
}

int read_finished(const reader_t *r) {
    return !r->bad && r->left == 0;
}

static uint8_t *room(writer_t *w, size_t n) {
    if (w->bad || w->capacity - w->used < n) {
        w->bad = 1;
        return NULL;
    }
    uint8_t *at = w->base + w->used;
    w->used += n;
    return at;
}

void write_u8(writer_t *w, uint8_t value) {
    uint8_t *at = room(w, 1);
    if (at) at[0] = value;
}

void write_u32(writer_t *w, uint32_t value) {
    uint8_t *at = room(w, 4);
    if (!at) return;
    at[0] = (uint8_t)(value >> 24);
    at[1] = (uint8_t)(value >> 16);
    at[2] = (uint8_t)(value >> 8);
    at[3] = (uint8_t)value;
}

void write_u64(writer_t *w, uint64_t value) {
    write_u32(w, (uint32_t)(value >> 32));
    write_u32(w, (uint32_t)value);
}

void write_bytes(writer_t *w, const uint8_t *value, size_t length) {
    if (length > BRIDGE_MAX_BYTES) {
        w->bad = 1;
        return;
    }
    write_u32(w, (uint32_t)length);
    uint8_t *at = room(w, length);
    if (at && length) memcpy(at, value, length);
}
