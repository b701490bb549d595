// PKCS#11 v2.40 types and the function list (p11-kit's pkcs11.h, libp11-kit-dev). A module is
// a shared object named in the config and loaded at run time (dlopen + C_GetFunctionList):
// nothing links against it.
#include <p11-kit-1/p11-kit/pkcs11.h>
