# Writes the sandbox's seccomp filter to stdout as a BPF program for `bwrap --seccomp FD`, built by
# libseccomp's own Python binding (Debian's python3-seccomp). Which calls it refuses is this list;
# loading it is bwrap's, and running this script is seccomp.ts's.
import errno
import sys

import seccomp

# System calls no shell command needs, each refused with EPERM as if the kernel forbade it (as
# Docker's default profile does), so a tool that probes one sees a plain "Operation not permitted".
REFUSED = [
    # Mounts and root changes: the sandbox's file system view is bwrap's alone.
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    # New namespaces, or joining another's: the sandbox's namespaces are bwrap's alone.
    "unshare", "setns",
    # The machine itself: modules, reboot, swap, clocks, accounting, quotas, the kernel log.
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "acct",
    "quotactl", "quotactl_fd", "syslog", "iopl", "ioperm", "vhangup", "uselib", "nfsservctl",
    "lookup_dcookie", "sethostname", "setdomainname",
    # Kernel attack surface a shell never uses: eBPF, perf, userfaultfd, io_uring, the key
    # retention service (keys are per user, shared with every other command of the same uid),
    # file handles that bypass path lookup, fanotify.
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key", "open_by_handle_at",
    "name_to_handle_at", "fanotify_init",
]

TIOCSTI = 0x5412  # Pushes bytes into a terminal's input: another session's shell would run them.
TIOCLINUX = 0x541C

# Everything else is allowed; a call of a foreign ABI (32-bit x86, x32) is killed, which is
# libseccomp's default for an architecture the filter does not list.
program = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
for name in REFUSED:
    program.add_rule(seccomp.ERRNO(errno.EPERM), name)
for request in (TIOCSTI, TIOCLINUX):
    program.add_rule(
        seccomp.ERRNO(errno.EPERM), "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request)
    )
program.export_bpf(sys.stdout)
