// Thin wrappers for kernel interfaces Swift cannot call directly: variadic open/ioctl and the
// function-like _IOR/_IOW request macros of V4L2, evdev, hidraw and the Bluetooth HCI socket.
// Each returns 0 or a positive count on success and -errno on failure, so Swift maps errors once.
#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H

#include <stdint.h>
#include <stddef.h>

/// open(2) itself, not openat(2): umockdev attaches ioctl emulation to open() only.
int hal_open(const char *path, int flags);
int hal_ioctl(int fd, unsigned long request, void *arg);

// ---- V4L2 -------------------------------------------------------------------------------------
typedef struct {
    char driver[16];
    char card[32];
    char bus_info[32];
    uint32_t capabilities;
    uint32_t device_caps;
} hal_v4l2_caps;

/// Stepwise/continuous sizes come back as a range; discrete ones have min == max.
typedef struct {
    uint32_t type; // 1 discrete, 2 continuous, 3 stepwise (V4L2_FRMSIZE_TYPE_*)
    uint32_t min_width, min_height, max_width, max_height, step_width, step_height;
} hal_v4l2_framesize;

int hal_v4l2_querycap(int fd, hal_v4l2_caps *out);
/// Fills fourcc and flags of the index-th format for buffer type (1 capture, 9 capture-mplane).
int hal_v4l2_enum_fmt(int fd, uint32_t buf_type, uint32_t index, uint32_t *fourcc, uint32_t *flags, char description[32]);
int hal_v4l2_enum_framesize(int fd, uint32_t fourcc, uint32_t index, hal_v4l2_framesize *out);
extern const uint32_t HAL_V4L2_CAP_VIDEO_CAPTURE;
extern const uint32_t HAL_V4L2_CAP_VIDEO_CAPTURE_MPLANE;
extern const uint32_t HAL_V4L2_CAP_STREAMING;
extern const uint32_t HAL_V4L2_CAP_DEVICE_CAPS;

// Multi-planar capture (V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE). Everything the driver answers is
// reported as it came (plane counts included, even past HAL_V4L2_MAX_PLANES) for Swift to check.
enum { HAL_V4L2_MAX_PLANES = 8 }; // VIDEO_MAX_PLANES, checked against the kernel header in shims.c

typedef struct {
    uint32_t width, height, pixelformat;
    uint32_t num_planes;                        // the driver's answer; only the first 8 are kept
    uint32_t bytesperline[HAL_V4L2_MAX_PLANES];
    uint32_t sizeimage[HAL_V4L2_MAX_PLANES];
} hal_v4l2_mplane_format;

typedef struct {
    uint32_t bytesused, length, mem_offset, data_offset;
} hal_v4l2_plane;

typedef struct {
    uint32_t index, sequence, flags;
    int64_t seconds, microseconds;
    uint32_t num_planes;                        // the driver's answer (v4l2_buffer.length)
    hal_v4l2_plane planes[HAL_V4L2_MAX_PLANES];
} hal_v4l2_mplane_buffer;

/// S_FMT with pix_mp (progressive); the driver's adjusted format comes back in `format`.
int hal_v4l2_mplane_set_format(int fd, hal_v4l2_mplane_format *format);
/// REQBUFS for mmap buffers of `buf_type`; the granted count comes back in `count`.
int hal_v4l2_request_buffers(int fd, uint32_t buf_type, uint32_t *count);
/// QUERYBUF, QBUF and DQBUF with a planes array of `num_planes` (at most HAL_V4L2_MAX_PLANES).
int hal_v4l2_mplane_query_buffer(int fd, uint32_t index, uint32_t num_planes, hal_v4l2_mplane_buffer *out);
int hal_v4l2_mplane_queue_buffer(int fd, uint32_t index, uint32_t num_planes);
int hal_v4l2_mplane_dequeue_buffer(int fd, uint32_t num_planes, hal_v4l2_mplane_buffer *out);
extern const uint32_t HAL_V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;

// ---- evdev ------------------------------------------------------------------------------------
typedef struct {
    uint16_t bustype, vendor, product, version;
} hal_input_id;

int hal_evdev_name(int fd, char *buf, size_t len);
int hal_evdev_id(int fd, hal_input_id *out);
/// 1 when the device advertises FF_RUMBLE, 0 when not; -errno when the query fails.
int hal_evdev_has_rumble(int fd);
/// Number of force-feedback effects the device can hold at once (EVIOCGEFFECTS).
int hal_evdev_effect_slots(int fd, int *out);
/// 1 when the device takes a global force-feedback gain (FF_GAIN), 0 when not; -errno on failure.
int hal_evdev_has_gain(int fd);
/// Uploads (id < 0: a new effect; else replaces effect `*id`) an FF_RUMBLE effect with these
/// magnitudes lasting `length_ms`; the kernel's id comes back in `*id`.
int hal_evdev_upload_rumble(int fd, int16_t *id, uint16_t strong, uint16_t weak, uint16_t length_ms);
/// Writes one EV_FF event: `code` an effect id (value: play count, 0 stops) or FF_GAIN.
int hal_evdev_write_ff(int fd, uint16_t code, int32_t value);
int hal_evdev_erase(int fd, int16_t id);
extern const uint16_t HAL_FF_GAIN;

// ---- hidraw -----------------------------------------------------------------------------------
int hal_hidraw_info(int fd, uint32_t *bustype, int16_t *vendor, int16_t *product);
int hal_hidraw_name(int fd, char *buf, size_t len);
/// The report descriptor (HIDIOCGRDESCSIZE then HIDIOCGRDESC); returns its length, at most `cap`.
int hal_hidraw_report_descriptor(int fd, uint8_t *buf, size_t cap);
/// BUS_USB and BUS_BLUETOOTH from <linux/input.h>: a pad's output reports differ between the two.
extern const uint32_t HAL_BUS_USB;
extern const uint32_t HAL_BUS_BLUETOOTH;

// ---- Bluetooth HCI socket ---------------------------------------------------------------------
typedef struct {
    uint16_t dev_id;
    char name[8];
    uint8_t bdaddr[6];   // as the kernel stores it: least significant byte first
    uint32_t flags;      // HCI_UP etc. as bits
    uint8_t type;
    uint8_t bus;
} hal_hci_controller;

/// A raw HCI socket bound to nothing; used to ask the kernel about controllers.
int hal_hci_control_socket(void);
/// Lists up to `max` controller ids; returns how many.
int hal_hci_dev_list(int ctl, uint16_t *ids, int max);
int hal_hci_dev_info(int ctl, uint16_t dev_id, hal_hci_controller *out);
extern const uint32_t HAL_HCI_UP_FLAG_BIT;


// ---- Signals ----------------------------------------------------------------------------------
/// Installs a handler for `signo` that writes the signal's number as one byte to `write_fd` (a
/// non-blocking pipe), the only async-signal-safe way to hand a signal to ordinary code. One
/// pipe serves every signal installed this way (the last `write_fd` given wins). SA_RESTART is
/// set so blocking calls elsewhere are not interrupted.
int hal_signal_to_pipe(int signo, int write_fd);
/// pipe2(O_CLOEXEC | O_NONBLOCK): both ends close on exec and never block.
int hal_pipe_nonblocking(int ends[2]);
/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a counter to wake a thread that waits in poll(2).
int hal_eventfd_nonblocking(void);
/// gettid(2): the calling thread's kernel id, as /proc/self/task names it.
int hal_thread_id(void);
/// Unblocks `signo` for the calling thread (threads made by a dispatch worker inherit a mask that
/// blocks nearly everything, and a thread-directed signal would then stay pending for ever).
int hal_signal_unblock(int signo);
/// Puts `signo` back to the default action (SIG_DFL).
int hal_signal_default(int signo);
/// Ignores `signo` (SIG_IGN).
int hal_signal_ignore(int signo);

// ---- Private files (LinuxIO/PrivateFile.swift) --------------------------------------------------
/// What lstat/fstatat (never following a final symbolic link) says about a directory entry.
typedef struct {
    uint32_t type;   // one of HAL_FILE_* below
    uint64_t device, inode;
    uint32_t mode;   // permission bits
    int64_t size;
    uint32_t owner;  // st_uid
} hal_file_info;

extern const uint32_t HAL_FILE_REGULAR, HAL_FILE_DIRECTORY, HAL_FILE_SYMLINK, HAL_FILE_CHARACTER_DEVICE,
                      HAL_FILE_BLOCK_DEVICE, HAL_FILE_FIFO, HAL_FILE_SOCKET, HAL_FILE_OTHER;

int hal_lstat(const char *path, hal_file_info *out);
/// stat(2): following every symbolic link, the final one included (what a path ends up naming).
int hal_stat(const char *path, hal_file_info *out);
/// Whether `fd` is an anonymous pipe (pipefs: a shell's `|`, reached as /dev/stdin or /dev/fd/N), as
/// opposed to a named FIFO on a disk: 1 yes, 0 no, -errno on failure.
int hal_is_anonymous_pipe(int fd);
int hal_fstatat_nofollow(int dirfd, const char *name, hal_file_info *out);
int hal_fstat(int fd, hal_file_info *out);
/// Whether process `pid` exists (kill(pid, 0) is not ESRCH): 1 yes, 0 no.
int hal_process_exists(int pid);
/// The names in the directory open as `dirfd` that begin with `prefix`, each followed by a NUL,
/// into `buffer` (names that do not fit are left out); read through a duplicate of `dirfd`, so
/// nothing is opened by path. The bytes written, or -errno.
long hal_directory_names(int dirfd, const char *prefix, char *buffer, unsigned long size);
/// open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC): a directory to create, link, rename and fsync in.
int hal_open_directory(const char *path);
/// An unnamed regular file in `dirfd`'s file system (O_TMPFILE | O_WRONLY | O_CLOEXEC), mode 0600
/// whatever the umask. -EOPNOTSUPP, -EISDIR or -EINVAL where the file system cannot make one.
int hal_open_unnamed(int dirfd);
/// A new file `name` in `dirfd` (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC), mode 0600
/// whatever the umask: fails with -EEXIST for anything already there, a symbolic link included.
int hal_create_exclusive(int dirfd, const char *name);
/// Gives the unnamed file `fd` the name `name` in `dirfd` (linkat through /proc/self/fd, else
/// AT_EMPTY_PATH): fails with -EEXIST if anything has that name; never replaces, never follows.
int hal_link_unnamed(int fd, int dirfd, const char *name);
/// renameat2(2) (through syscall(2): older C libraries lack the wrapper). -EINVAL or -ENOSYS where
/// the file system or kernel does not support `flags`.
int hal_renameat2(int olddirfd, const char *oldname, int newdirfd, const char *newname, unsigned int flags);
extern const unsigned int HAL_RENAME_NOREPLACE, HAL_RENAME_EXCHANGE;
int hal_renameat(int olddirfd, const char *oldname, int newdirfd, const char *newname);
/// link(2) relative to directories, never following a final symbolic link.
int hal_linkat(int olddirfd, const char *oldname, int newdirfd, const char *newname);
int hal_unlinkat(int dirfd, const char *name);
/// fsync(2), retried on EINTR.
int hal_fsync(int fd);
/// write(2) of the whole buffer, retried on EINTR and short writes; returns the count or -errno.
long hal_write_all(int fd, const void *bytes, size_t count);
/// ftruncate(2), retried on EINTR: 0 or -errno.
int hal_ftruncate(int fd, int64_t length);

// ---- Hotplug ------------------------------------------------------------------------------------
/// A non-blocking netlink socket bound to the kernel's uevent multicast group (`groups` 1: the
/// kernel's own messages; udev re-sends on group 2): the fd, or -errno.
int hal_uevent_socket(unsigned groups);
/// recv(2) of one datagram; the sender's netlink port id in *sender_port (0 is the kernel).
/// Returns the length, or -errno.
long hal_uevent_receive(int fd, void *buffer, size_t size, unsigned *sender_port);

// ---- Process ------------------------------------------------------------------------------------
/// prctl(PR_SET_DUMPABLE, 0) and RLIMIT_CORE 0 (soft and hard): no core file and no ptrace by
/// other users while secrets are in memory.
int hal_disable_core_dumps(void);
/// For the calling thread only: its name (at most 15 bytes, as `top -H` shows it), then the
/// SCHED_IDLE policy, or nice 19 when that is refused. Returns 2 for SCHED_IDLE, 1 for nice 19,
/// 0 when neither could be set.
int hal_thread_become_idle(const char *name);

#endif
