#pragma once
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's own driver (compiler-rt, linked by -sanitize=fuzzer). SwiftPM gives every
/// executable a `main` of its own, so the targets start libFuzzer from Swift through this call
/// instead of libFuzzer's `main`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
