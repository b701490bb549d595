// CShims is header-only; SwiftPM needs one translation unit per C target.
#include "CShims.h"
