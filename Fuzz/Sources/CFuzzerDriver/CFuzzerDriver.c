// Only the header matters: LLVMFuzzerRunDriver comes from compiler-rt's libFuzzer.
#include "CFuzzerDriver.h"
