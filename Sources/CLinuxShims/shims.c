#define _GNU_SOURCE
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include "CLinuxShims.h"

#include <errno.h>
#include <dirent.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <linux/videodev2.h>
#include <linux/input.h>
#include <linux/hidraw.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

static int result(int rc) { return rc < 0 ? -errno : rc; }

int hal_open(const char *path, int flags) { return result(open(path, flags | O_CLOEXEC)); }

int hal_ioctl(int fd, unsigned long request, void *arg) {
    int rc;
    do { rc = ioctl(fd, request, arg); } while (rc < 0 && errno == EINTR);
    return result(rc);
}

// ---- V4L2 -------------------------------------------------------------------------------------
const uint32_t HAL_V4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
const uint32_t HAL_V4L2_CAP_VIDEO_CAPTURE_MPLANE = V4L2_CAP_VIDEO_CAPTURE_MPLANE;
const uint32_t HAL_V4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
const uint32_t HAL_V4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;

int hal_v4l2_querycap(int fd, hal_v4l2_caps *out) {
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    int rc = hal_ioctl(fd, VIDIOC_QUERYCAP, &cap);
    if (rc < 0) return rc;
    memcpy(out->driver, cap.driver, sizeof out->driver);
    out->driver[sizeof out->driver - 1] = 0;
    memcpy(out->card, cap.card, sizeof out->card);
    out->card[sizeof out->card - 1] = 0;
    memcpy(out->bus_info, cap.bus_info, sizeof out->bus_info);
    out->bus_info[sizeof out->bus_info - 1] = 0;
    out->capabilities = cap.capabilities;
    out->device_caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    return 0;
}

int hal_v4l2_enum_fmt(int fd, uint32_t buf_type, uint32_t index, uint32_t *fourcc, uint32_t *flags, char description[32]) {
    struct v4l2_fmtdesc d;
    memset(&d, 0, sizeof d);
    d.index = index;
    d.type = buf_type;
    int rc = hal_ioctl(fd, VIDIOC_ENUM_FMT, &d);
    if (rc < 0) return rc;
    *fourcc = d.pixelformat;
    *flags = d.flags;
    memcpy(description, d.description, 32);
    description[31] = 0;
    return 0;
}

int hal_v4l2_enum_framesize(int fd, uint32_t fourcc, uint32_t index, hal_v4l2_framesize *out) {
    struct v4l2_frmsizeenum s;
    memset(&s, 0, sizeof s);
    s.index = index;
    s.pixel_format = fourcc;
    int rc = hal_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &s);
    if (rc < 0) return rc;
    out->type = s.type;
    if (s.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
        out->min_width = out->max_width = s.discrete.width;
        out->min_height = out->max_height = s.discrete.height;
        out->step_width = out->step_height = 0;
    } else {
        out->min_width = s.stepwise.min_width;
        out->max_width = s.stepwise.max_width;
        out->min_height = s.stepwise.min_height;
        out->max_height = s.stepwise.max_height;
        out->step_width = s.stepwise.step_width;
        out->step_height = s.stepwise.step_height;
    }
    return 0;
}

_Static_assert(HAL_V4L2_MAX_PLANES == VIDEO_MAX_PLANES, "VIDEO_MAX_PLANES changed");
const uint32_t HAL_V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;

int hal_v4l2_mplane_set_format(int fd, hal_v4l2_mplane_format *format) {
    struct v4l2_format f;
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
    f.fmt.pix_mp.width = format->width;
    f.fmt.pix_mp.height = format->height;
    f.fmt.pix_mp.pixelformat = format->pixelformat;
    f.fmt.pix_mp.field = V4L2_FIELD_NONE;
    int rc = hal_ioctl(fd, VIDIOC_S_FMT, &f);
    if (rc < 0) return rc;
    memset(format, 0, sizeof *format);
    format->width = f.fmt.pix_mp.width;
    format->height = f.fmt.pix_mp.height;
    format->pixelformat = f.fmt.pix_mp.pixelformat;
    format->num_planes = f.fmt.pix_mp.num_planes;
    for (int p = 0; p < VIDEO_MAX_PLANES; p++) {
        format->bytesperline[p] = f.fmt.pix_mp.plane_fmt[p].bytesperline;
        format->sizeimage[p] = f.fmt.pix_mp.plane_fmt[p].sizeimage;
    }
    return 0;
}

int hal_v4l2_request_buffers(int fd, uint32_t buf_type, uint32_t *count) {
    struct v4l2_requestbuffers r;
    memset(&r, 0, sizeof r);
    r.count = *count;
    r.type = buf_type;
    r.memory = V4L2_MEMORY_MMAP;
    int rc = hal_ioctl(fd, VIDIOC_REQBUFS, &r);
    if (rc < 0) return rc;
    *count = r.count;
    return 0;
}

/// One buffer ioctl with a planes array; the kernel (or a fake) writes back at most `num_planes`
/// entries, and how many planes it says the buffer has in `length`.
static int mplane_buffer_ioctl(int fd, unsigned long request, uint32_t index, uint32_t num_planes, hal_v4l2_mplane_buffer *out) {
    if (num_planes == 0 || num_planes > VIDEO_MAX_PLANES) return -EINVAL;
    struct v4l2_plane planes[VIDEO_MAX_PLANES];
    memset(planes, 0, sizeof planes);
    struct v4l2_buffer b;
    memset(&b, 0, sizeof b);
    b.index = index;
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
    b.memory = V4L2_MEMORY_MMAP;
    b.m.planes = planes;
    b.length = num_planes;
    int rc = hal_ioctl(fd, request, &b);
    if (rc < 0 || out == NULL) return rc;
    memset(out, 0, sizeof *out);
    out->index = b.index;
    out->sequence = b.sequence;
    out->flags = b.flags;
    out->seconds = b.timestamp.tv_sec;
    out->microseconds = b.timestamp.tv_usec;
    out->num_planes = b.length;
    for (uint32_t p = 0; p < num_planes; p++) {
        out->planes[p].bytesused = planes[p].bytesused;
        out->planes[p].length = planes[p].length;
        out->planes[p].mem_offset = planes[p].m.mem_offset;
        out->planes[p].data_offset = planes[p].data_offset;
    }
    return 0;
}

int hal_v4l2_mplane_query_buffer(int fd, uint32_t index, uint32_t num_planes, hal_v4l2_mplane_buffer *out) {
    return mplane_buffer_ioctl(fd, VIDIOC_QUERYBUF, index, num_planes, out);
}

int hal_v4l2_mplane_queue_buffer(int fd, uint32_t index, uint32_t num_planes) {
    return mplane_buffer_ioctl(fd, VIDIOC_QBUF, index, num_planes, NULL);
}

int hal_v4l2_mplane_dequeue_buffer(int fd, uint32_t num_planes, hal_v4l2_mplane_buffer *out) {
    return mplane_buffer_ioctl(fd, VIDIOC_DQBUF, 0, num_planes, out);
}

// ---- evdev ------------------------------------------------------------------------------------
int hal_evdev_name(int fd, char *buf, size_t len) {
    if (len == 0) return -EINVAL;
    memset(buf, 0, len);
    int rc = hal_ioctl(fd, EVIOCGNAME(len - 1), buf);
    return rc < 0 ? rc : 0;
}

int hal_evdev_id(int fd, hal_input_id *out) {
    struct input_id id;
    int rc = hal_ioctl(fd, EVIOCGID, &id);
    if (rc < 0) return rc;
    out->bustype = id.bustype; out->vendor = id.vendor; out->product = id.product; out->version = id.version;
    return 0;
}

int hal_evdev_has_rumble(int fd) {
    unsigned char ev[(EV_MAX + 8) / 8];
    memset(ev, 0, sizeof ev);
    int rc = hal_ioctl(fd, EVIOCGBIT(0, sizeof ev), ev);
    if (rc < 0) return rc;
    if (!(ev[EV_FF / 8] & (1u << (EV_FF % 8)))) return 0;
    unsigned char ff[(FF_MAX + 8) / 8];
    memset(ff, 0, sizeof ff);
    rc = hal_ioctl(fd, EVIOCGBIT(EV_FF, sizeof ff), ff);
    if (rc < 0) return rc;
    return (ff[FF_RUMBLE / 8] & (1u << (FF_RUMBLE % 8))) ? 1 : 0;
}

int hal_evdev_effect_slots(int fd, int *out) { return hal_ioctl(fd, EVIOCGEFFECTS, out); }

const uint16_t HAL_FF_GAIN = FF_GAIN;

int hal_evdev_has_gain(int fd) {
    unsigned char ff[(FF_MAX + 8) / 8];
    memset(ff, 0, sizeof ff);
    int rc = hal_ioctl(fd, EVIOCGBIT(EV_FF, sizeof ff), ff);
    if (rc < 0) return rc;
    return (ff[FF_GAIN / 8] & (1u << (FF_GAIN % 8))) ? 1 : 0;
}

int hal_evdev_upload_rumble(int fd, int16_t *id, uint16_t strong, uint16_t weak, uint16_t length_ms) {
    struct ff_effect effect;
    memset(&effect, 0, sizeof effect);
    effect.type = FF_RUMBLE;
    effect.id = *id;
    effect.replay.length = length_ms;
    effect.u.rumble.strong_magnitude = strong;
    effect.u.rumble.weak_magnitude = weak;
    int rc = hal_ioctl(fd, EVIOCSFF, &effect);
    if (rc < 0) return rc;
    *id = effect.id;
    return 0;
}

int hal_evdev_write_ff(int fd, uint16_t code, int32_t value) {
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = EV_FF;
    event.code = code;
    event.value = value;
    ssize_t n = write(fd, &event, sizeof event);
    if (n < 0) return -errno;
    return n == (ssize_t)sizeof event ? 0 : -EIO;
}

int hal_evdev_erase(int fd, int16_t id) {
    return hal_ioctl(fd, EVIOCRMFF, (void *)(intptr_t)id);
}

// ---- hidraw -----------------------------------------------------------------------------------
int hal_hidraw_info(int fd, uint32_t *bustype, int16_t *vendor, int16_t *product) {
    struct hidraw_devinfo info;
    int rc = hal_ioctl(fd, HIDIOCGRAWINFO, &info);
    if (rc < 0) return rc;
    *bustype = info.bustype; *vendor = info.vendor; *product = info.product;
    return 0;
}

int hal_hidraw_name(int fd, char *buf, size_t len) {
    if (len == 0) return -EINVAL;
    memset(buf, 0, len);
    int rc = hal_ioctl(fd, HIDIOCGRAWNAME(len - 1), buf);
    return rc < 0 ? rc : 0;
}

int hal_hidraw_report_descriptor(int fd, uint8_t *buf, size_t cap) {
    int size = 0;
    int rc = hal_ioctl(fd, HIDIOCGRDESCSIZE, &size);
    if (rc < 0) return rc;
    if (size < 0 || size > HID_MAX_DESCRIPTOR_SIZE) return -EINVAL;
    // The kernel reads `size` from the struct and copies that many bytes; the whole 4100-byte
    // struct is passed because that is the size the ioctl number encodes.
    struct hidraw_report_descriptor descriptor;
    memset(&descriptor, 0, sizeof descriptor);
    descriptor.size = (uint32_t)size;
    rc = hal_ioctl(fd, HIDIOCGRDESC, &descriptor);
    if (rc < 0) return rc;
    size_t n = descriptor.size < cap ? descriptor.size : cap;
    memcpy(buf, descriptor.value, n);
    return (int)n;
}

const uint32_t HAL_BUS_USB = BUS_USB;
const uint32_t HAL_BUS_BLUETOOTH = BUS_BLUETOOTH;

// ---- Bluetooth HCI socket ---------------------------------------------------------------------
const uint32_t HAL_HCI_UP_FLAG_BIT = HCI_UP;

int hal_hci_control_socket(void) {
    return result(socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI));
}

int hal_hci_dev_list(int ctl, uint16_t *ids, int max) {
    if (max <= 0 || max > HCI_MAX_DEV) max = HCI_MAX_DEV;
    char storage[sizeof(struct hci_dev_list_req) + HCI_MAX_DEV * sizeof(struct hci_dev_req)];
    struct hci_dev_list_req *req = (struct hci_dev_list_req *)storage;
    memset(storage, 0, sizeof storage);
    req->dev_num = (uint16_t)max;
    int rc = hal_ioctl(ctl, HCIGETDEVLIST, req);
    if (rc < 0) return rc;
    for (int i = 0; i < req->dev_num && i < max; i++) ids[i] = req->dev_req[i].dev_id;
    return req->dev_num;
}

int hal_hci_dev_info(int ctl, uint16_t dev_id, hal_hci_controller *out) {
    struct hci_dev_info di;
    memset(&di, 0, sizeof di);
    di.dev_id = dev_id;
    int rc = hal_ioctl(ctl, HCIGETDEVINFO, &di);
    if (rc < 0) return rc;
    out->dev_id = di.dev_id;
    memcpy(out->name, di.name, sizeof out->name);
    out->name[sizeof out->name - 1] = 0;
    memcpy(out->bdaddr, di.bdaddr.b, 6);
    out->flags = di.flags;
    out->type = di.type & 0x0f;
    out->bus = di.type >> 4;
    return 0;
}

// ---- Signals ----------------------------------------------------------------------------------
static volatile int signal_pipe_fd = -1;

static void signal_to_pipe(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    if (signal_pipe_fd >= 0) { ssize_t ignored = write(signal_pipe_fd, &byte, 1); (void)ignored; }
    errno = saved;
}

int hal_signal_to_pipe(int signo, int write_fd) {
    signal_pipe_fd = write_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = signal_to_pipe;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return result(sigaction(signo, &action, NULL));
}

int hal_pipe_nonblocking(int ends[2]) { return result(pipe2(ends, O_CLOEXEC | O_NONBLOCK)); }

int hal_eventfd_nonblocking(void) { return result(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)); }

int hal_thread_id(void) { return (int)syscall(SYS_gettid); }

int hal_signal_unblock(int signo) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    int rc = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return rc == 0 ? 0 : -rc;
}

static int set_action(int signo, void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    return result(sigaction(signo, &action, NULL));
}

int hal_signal_default(int signo) { return set_action(signo, SIG_DFL); }

int hal_signal_ignore(int signo) { return set_action(signo, SIG_IGN); }

// ---- Private files ------------------------------------------------------------------------------
const uint32_t HAL_FILE_REGULAR = 1, HAL_FILE_DIRECTORY = 2, HAL_FILE_SYMLINK = 3, HAL_FILE_CHARACTER_DEVICE = 4,
               HAL_FILE_BLOCK_DEVICE = 5, HAL_FILE_FIFO = 6, HAL_FILE_SOCKET = 7, HAL_FILE_OTHER = 8;

static void describe(const struct stat *st, hal_file_info *out) {
    switch (st->st_mode & S_IFMT) {
    case S_IFREG: out->type = HAL_FILE_REGULAR; break;
    case S_IFDIR: out->type = HAL_FILE_DIRECTORY; break;
    case S_IFLNK: out->type = HAL_FILE_SYMLINK; break;
    case S_IFCHR: out->type = HAL_FILE_CHARACTER_DEVICE; break;
    case S_IFBLK: out->type = HAL_FILE_BLOCK_DEVICE; break;
    case S_IFIFO: out->type = HAL_FILE_FIFO; break;
    case S_IFSOCK: out->type = HAL_FILE_SOCKET; break;
    default: out->type = HAL_FILE_OTHER; break;
    }
    out->device = st->st_dev;
    out->inode = st->st_ino;
    out->mode = st->st_mode & 07777;
    out->size = st->st_size;
    out->owner = st->st_uid;
}

long hal_directory_names(int dirfd, const char *prefix, char *buffer, unsigned long size) {
    int copy = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return -errno;
    DIR *dir = fdopendir(copy);
    if (!dir) { int e = errno; close(copy); return -e; }
    rewinddir(dir);
    size_t prefixLength = strlen(prefix);
    unsigned long used = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, prefixLength) != 0) continue;
        size_t length = strlen(entry->d_name) + 1;
        if (used + length > size) continue;
        memcpy(buffer + used, entry->d_name, length);
        used += length;
    }
    closedir(dir);
    return (long)used;
}

int hal_process_exists(int pid) {
    if (pid <= 0) return 0;
    return (kill(pid, 0) == 0 || errno != ESRCH) ? 1 : 0;
}

int hal_lstat(const char *path, hal_file_info *out) {
    struct stat st;
    if (lstat(path, &st) < 0) return -errno;
    describe(&st, out);
    return 0;
}

int hal_stat(const char *path, hal_file_info *out) {
    struct stat st;
    if (stat(path, &st) < 0) return -errno;
    describe(&st, out);
    return 0;
}

int hal_is_anonymous_pipe(int fd) {
    struct statfs fs;
    if (fstatfs(fd, &fs) < 0) return -errno;
    return fs.f_type == 0x50495045 /* PIPEFS_MAGIC */ ? 1 : 0;
}

int hal_fstatat_nofollow(int dirfd, const char *name, hal_file_info *out) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return -errno;
    describe(&st, out);
    return 0;
}

int hal_fstat(int fd, hal_file_info *out) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    describe(&st, out);
    return 0;
}

int hal_open_directory(const char *path) { return result(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

/// The umask may take bits away from the mode given to open(2); fchmod makes it exactly 0600.
static int private_mode(int fd) {
    if (fd < 0) return -errno;
    if (fchmod(fd, 0600) < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int hal_open_unnamed(int dirfd) {
    int fd;
    do { fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600); } while (fd < 0 && errno == EINTR);
    return private_mode(fd);
}

int hal_create_exclusive(int dirfd, const char *name) {
    int fd;
    do { fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600); } while (fd < 0 && errno == EINTR);
    return private_mode(fd);
}

int hal_link_unnamed(int fd, int dirfd, const char *name) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != ENOENT) return -errno;
    // No /proc (or the directory is gone): AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH.
    if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
    return errno == EPERM ? -ENOENT : -errno;
}

const unsigned int HAL_RENAME_NOREPLACE = RENAME_NOREPLACE, HAL_RENAME_EXCHANGE = RENAME_EXCHANGE;

int hal_renameat2(int olddirfd, const char *oldname, int newdirfd, const char *newname, unsigned int flags) {
    return result((int)syscall(SYS_renameat2, olddirfd, oldname, newdirfd, newname, flags));
}

int hal_renameat(int olddirfd, const char *oldname, int newdirfd, const char *newname) {
    return result(renameat(olddirfd, oldname, newdirfd, newname));
}

int hal_linkat(int olddirfd, const char *oldname, int newdirfd, const char *newname) {
    return result(linkat(olddirfd, oldname, newdirfd, newname, 0));
}

int hal_unlinkat(int dirfd, const char *name) { return result(unlinkat(dirfd, name, 0)); }

int hal_fsync(int fd) {
    int rc;
    do { rc = fsync(fd); } while (rc < 0 && errno == EINTR);
    return result(rc);
}

long hal_write_all(int fd, const void *bytes, size_t count) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = write(fd, (const char *)bytes + done, count - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (n == 0) return -EIO;
        done += (size_t)n;
    }
    return (long)done;
}

// ---- Process ------------------------------------------------------------------------------------
int hal_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) < 0) return -errno;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return -errno;
    return 0;
}

int hal_thread_become_idle(const char *name) {
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
    struct sched_param parameters = { .sched_priority = 0 };
    // Linux schedules threads: pid 0 is the calling thread alone (sched(7)), and so is `who` 0
    // for setpriority under NPTL (setpriority(2), NOTES).
    if (sched_setscheduler(0, SCHED_IDLE, &parameters) == 0) return 2;
    if (setpriority(PRIO_PROCESS, 0, 19) == 0) return 1;
    return 0;
}

int hal_uevent_socket(unsigned groups) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -errno;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

long hal_uevent_receive(int fd, void *buffer, size_t size, unsigned *sender_port) {
    struct sockaddr_nl from;
    socklen_t length = sizeof from;
    memset(&from, 0, sizeof from);
    for (;;) {
        ssize_t n = recvfrom(fd, buffer, size, 0, (struct sockaddr *)&from, &length);
        if (n >= 0) {
            if (sender_port) *sender_port = from.nl_pid;
            return (long)n;
        }
        if (errno != EINTR) return -errno;
    }
}

int hal_ftruncate(int fd, int64_t length) {
    while (ftruncate(fd, (off_t)length) < 0) {
        if (errno != EINTR) return -errno;
    }
    return 0;
}
