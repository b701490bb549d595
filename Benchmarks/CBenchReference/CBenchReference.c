#include "CBenchReference.h"

int cbench_reference_placeholder(void) { return 0; }
