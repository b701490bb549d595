// The shim over libgpiod 2.x (included by shim.h when the v2 header is the one installed).
// v2 configures a request through settings and config objects and reads chip and line facts
// through info snapshots; each is freed here before returning, keeping errno of the failure.
#define OCK_GPIOD_API 2

static inline const char *ock_gpiod_version(void) { return gpiod_api_version(); }

static inline struct gpiod_chip *ock_gpiod_chip_open(const char *path) { return gpiod_chip_open(path); }
static inline void ock_gpiod_chip_close(struct gpiod_chip *chip) { gpiod_chip_close(chip); }

static inline int ock_gpiod_chip_label(struct gpiod_chip *chip, char *buffer, size_t size) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return -1;
    ock_gpiod_copy(buffer, size, gpiod_chip_info_get_label(info));
    gpiod_chip_info_free(info);
    return 0;
}

static inline int ock_gpiod_chip_num_lines(struct gpiod_chip *chip, unsigned int *count) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return -1;
    *count = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return 0;
}

static inline struct ock_gpiod_request *ock_gpiod_request(struct gpiod_chip *chip, unsigned int offset,
        const char *consumer, int mode, bool active_low, int bias, int drive) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    int ok = settings && line_config && request_config;
    if (ok) {
        enum gpiod_line_bias line_bias = GPIOD_LINE_BIAS_AS_IS;
        switch (bias) {
        case OCK_GPIOD_BIAS_DISABLED: line_bias = GPIOD_LINE_BIAS_DISABLED; break;
        case OCK_GPIOD_BIAS_PULL_UP: line_bias = GPIOD_LINE_BIAS_PULL_UP; break;
        case OCK_GPIOD_BIAS_PULL_DOWN: line_bias = GPIOD_LINE_BIAS_PULL_DOWN; break;
        }
        gpiod_line_settings_set_active_low(settings, active_low);
        ok = gpiod_line_settings_set_bias(settings, line_bias) == 0;
        if (mode == OCK_GPIOD_OUTPUT) {
            enum gpiod_line_drive line_drive = GPIOD_LINE_DRIVE_PUSH_PULL;
            if (drive == OCK_GPIOD_DRIVE_OPEN_DRAIN) line_drive = GPIOD_LINE_DRIVE_OPEN_DRAIN;
            if (drive == OCK_GPIOD_DRIVE_OPEN_SOURCE) line_drive = GPIOD_LINE_DRIVE_OPEN_SOURCE;
            // The first level goes to the kernel with the direction, in one request.
            ok = ok && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0
                && gpiod_line_settings_set_drive(settings, line_drive) == 0
                && gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE) == 0;
        } else {
            ok = ok && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0
                && gpiod_line_settings_set_edge_detection(settings,
                       mode == OCK_GPIOD_INPUT_EDGES ? GPIOD_LINE_EDGE_BOTH : GPIOD_LINE_EDGE_NONE) == 0;
        }
        gpiod_request_config_set_consumer(request_config, consumer);
        ok = ok && gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0;
        if (ok) request = gpiod_chip_request_lines(chip, request_config, line_config);
    }
    int saved = errno;
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    gpiod_line_settings_free(settings);
    errno = saved;
    return (struct ock_gpiod_request *)request;
}

// The holder of a line, for a busy error: 1 with its name in buffer, 0 when it has none.
static inline int ock_gpiod_line_consumer(struct gpiod_chip *chip, unsigned int offset, char *buffer, size_t size) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (!info) return -1;
    const char *consumer = gpiod_line_info_get_consumer(info);
    int named = consumer && consumer[0] ? 1 : 0;
    ock_gpiod_copy(buffer, size, consumer);
    gpiod_line_info_free(info);
    return named;
}

// Requests here hold one line, so the all-lines value calls address exactly that line.
static inline int ock_gpiod_set(struct ock_gpiod_request *request, int active) {
    enum gpiod_line_value value = active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
    return gpiod_line_request_set_values((struct gpiod_line_request *)request, &value);
}

static inline int ock_gpiod_get(struct ock_gpiod_request *request) {
    enum gpiod_line_value value = GPIOD_LINE_VALUE_ERROR;
    if (gpiod_line_request_get_values((struct gpiod_line_request *)request, &value) != 0) return -1;
    return value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0;
}

static inline int ock_gpiod_event_fd(struct ock_gpiod_request *request) {
    return gpiod_line_request_get_fd((struct gpiod_line_request *)request);
}

// Up to OCK_GPIOD_EDGE_BATCH queued edge events; -1 with EAGAIN when none (non-blocking fd).
static inline int ock_gpiod_read_edges(struct ock_gpiod_request *request) {
    struct gpiod_edge_event_buffer *buffer = gpiod_edge_event_buffer_new(OCK_GPIOD_EDGE_BATCH);
    if (!buffer) return -1;
    int count = gpiod_line_request_read_edge_events((struct gpiod_line_request *)request, buffer, OCK_GPIOD_EDGE_BATCH);
    int saved = errno;
    gpiod_edge_event_buffer_free(buffer);
    errno = saved;
    return count;
}

static inline void ock_gpiod_release(struct ock_gpiod_request *request) {
    gpiod_line_request_release((struct gpiod_line_request *)request);
}
