// Preloaded next to umockdev for libv4l2 tests. libv4l2 reaches the kernel through raw
// syscall(SYS_ioctl, …) and friends, which bypass umockdev's ioctl emulation; this sends those
// calls back through the libc functions, which umockdev does intercept. Test-only.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long number, ...) {
    va_list args;
    va_start(args, number);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(args, long);
    va_end(args);
    switch (number) {
    case SYS_ioctl: return ioctl((int)a[0], (unsigned long)a[1], (void *)a[2]);
    case SYS_read: return read((int)a[0], (void *)a[1], (size_t)a[2]);
    case SYS_write: return write((int)a[0], (const void *)a[1], (size_t)a[2]);
    case SYS_close: return close((int)a[0]);
    case SYS_openat: return openat((int)a[0], (const char *)a[1], (int)a[2], (mode_t)a[3]);
    case SYS_mmap: return (long)mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
    case SYS_munmap: return munmap((void *)a[0], (size_t)a[1]);
    default: {
        long (*next)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
        return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    }
}
