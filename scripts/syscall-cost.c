// What the two system calls libzmq makes on every mailbox check cost on this machine: getpid (its fork check) and a
// poll of one eventfd with a zero timeout. docs/BENCHMARKS.md, twenty-fifth session.
// Build and run: cc -O2 scripts/syscall-cost.c -o /tmp/syscall-cost && /tmp/syscall-cost
#include <poll.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double nanoseconds(struct timespec a, struct timespec b) {
    return (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
}

int main(void) {
    const int count = 1000000;
    struct timespec start, end;
    long sink = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    // syscall(), not getpid(): some libcs cache the pid, libzmq's glibc does not.
    for (int i = 0; i < count; i++) sink += syscall(SYS_getpid);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("getpid: %.0f ns\n", nanoseconds(start, end) / count);
    int fd = eventfd(0, EFD_NONBLOCK);
    struct pollfd descriptor = {fd, POLLIN, 0};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < count; i++) sink += poll(&descriptor, 1, 0);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("poll of an idle eventfd, zero timeout: %.0f ns\n", nanoseconds(start, end) / count);
    return sink == -1;
}
