#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/// v4l2_ioctl is variadic, which Swift cannot call: this fixed-argument wrapper can be, and it
/// follows our shims' convention (the result, or -errno), retrying when interrupted.
static inline int hal_libv4l2_ioctl(int fd, unsigned long request, void *arg) {
    int rc;
    do { rc = v4l2_ioctl(fd, request, arg); } while (rc < 0 && errno == EINTR);
    return rc < 0 ? -errno : rc;
}

/// v4l2_fd_open with stdout pointed at /dev/null meanwhile: libv4l2's mplane plugin prints
/// "Using mplane plugin for capture" there, which would corrupt the one JSON object `--json`
/// writes. Anything another thread writes to stdout in that moment is lost too, so this is used
/// only for multi-planar cameras (the only ones the plugin takes), once, before streaming.
static inline int hal_libv4l2_fd_open_quietly(int fd, int flags) {
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int quiet = saved >= 0 && null >= 0 && dup2(null, STDOUT_FILENO) >= 0;
    int rc = v4l2_fd_open(fd, flags);
    fflush(stdout);
    if (quiet) dup2(saved, STDOUT_FILENO);
    if (saved >= 0) close(saved);
    if (null >= 0) close(null);
    return rc;
}
