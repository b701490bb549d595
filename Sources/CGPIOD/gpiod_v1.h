// The shim over libgpiod 1.x (included by shim.h when the v1 header is the one installed).
#define OCK_GPIOD_API 1

static inline const char *ock_gpiod_version(void) { return gpiod_version_string(); }

static inline struct gpiod_chip *ock_gpiod_chip_open(const char *path) { return gpiod_chip_open(path); }
static inline void ock_gpiod_chip_close(struct gpiod_chip *chip) { gpiod_chip_close(chip); }

static inline int ock_gpiod_chip_label(struct gpiod_chip *chip, char *buffer, size_t size) {
    ock_gpiod_copy(buffer, size, gpiod_chip_label(chip));
    return 0;
}

static inline int ock_gpiod_chip_num_lines(struct gpiod_chip *chip, unsigned int *count) {
    *count = gpiod_chip_num_lines(chip);
    return 0;
}

static inline struct ock_gpiod_request *ock_gpiod_request(struct gpiod_chip *chip, unsigned int offset,
        const char *consumer, int mode, bool active_low, int bias, int drive) {
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    if (!line) return NULL;
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case OCK_GPIOD_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case OCK_GPIOD_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case OCK_GPIOD_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    }
    switch (drive) {
    case OCK_GPIOD_DRIVE_OPEN_DRAIN: flags |= GPIOD_LINE_REQUEST_FLAG_OPEN_DRAIN; break;
    case OCK_GPIOD_DRIVE_OPEN_SOURCE: flags |= GPIOD_LINE_REQUEST_FLAG_OPEN_SOURCE; break;
    }
    int result;
    switch (mode) {
    case OCK_GPIOD_OUTPUT: result = gpiod_line_request_output_flags(line, consumer, flags, 0); break;
    case OCK_GPIOD_INPUT_EDGES: result = gpiod_line_request_both_edges_events_flags(line, consumer, flags); break;
    default: result = gpiod_line_request_input_flags(line, consumer, flags); break;
    }
    return result == 0 ? (struct ock_gpiod_request *)line : NULL;
}

// The holder of a line, for a busy error: 1 with its name in buffer, 0 when it has none.
static inline int ock_gpiod_line_consumer(struct gpiod_chip *chip, unsigned int offset, char *buffer, size_t size) {
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    if (!line || gpiod_line_update(line) != 0) return -1;
    const char *consumer = gpiod_line_consumer(line);
    ock_gpiod_copy(buffer, size, consumer);
    return consumer && consumer[0] ? 1 : 0;
}

static inline int ock_gpiod_set(struct ock_gpiod_request *request, int active) {
    return gpiod_line_set_value((struct gpiod_line *)request, active ? 1 : 0);
}

static inline int ock_gpiod_get(struct ock_gpiod_request *request) {
    return gpiod_line_get_value((struct gpiod_line *)request);
}

static inline int ock_gpiod_event_fd(struct ock_gpiod_request *request) {
    return gpiod_line_event_get_fd((struct gpiod_line *)request);
}

// Up to OCK_GPIOD_EDGE_BATCH queued edge events; -1 with EAGAIN when none (non-blocking fd).
static inline int ock_gpiod_read_edges(struct ock_gpiod_request *request) {
    struct gpiod_line_event events[OCK_GPIOD_EDGE_BATCH];
    return gpiod_line_event_read_multiple((struct gpiod_line *)request, events, OCK_GPIOD_EDGE_BATCH);
}

static inline void ock_gpiod_release(struct ock_gpiod_request *request) {
    gpiod_line_release((struct gpiod_line *)request);
}
