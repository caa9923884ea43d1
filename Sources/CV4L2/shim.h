#include <errno.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/// v4l2_ioctl is variadic, which Swift cannot call: this fixed-argument wrapper can be, and it
/// follows our shims' convention (the result, or -errno), retrying when interrupted.
static inline int hal_libv4l2_ioctl(int fd, unsigned long request, void *arg) {
    int rc;
    do { rc = v4l2_ioctl(fd, request, arg); } while (rc < 0 && errno == EINTR);
    return rc < 0 ? -errno : rc;
}
