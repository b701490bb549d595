// CShims is header-only; SwiftPM needs one translation unit per C target.
#include "CShims.h"
// The spidev helpers (ock_spi_*) are static inline in CShims.h as well; nothing to compile here.
