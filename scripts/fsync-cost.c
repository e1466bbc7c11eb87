// What one fdatasync costs this machine beyond its wait: the CPU the kernel spends on it, on the syncing core and on
// the others. A thread rewrites a 4 KiB block of a file and fdatasyncs it, over and over, for SECONDS; meanwhile a
// second thread spins and counts, and the same spin runs alone before, for comparison. /proc/stat gives the
// machine's system and softirq time over each phase.
//
//   cc -O2 -pthread -o fsync-cost scripts/fsync-cost.c && ./fsync-cost FILE [SECONDS]
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static long syncs;
static double waited;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// The machine's system + softirq time in seconds (the first line of /proc/stat, in clock ticks).
static double kernel_seconds(void) {
    unsigned long long user, nice, system, idle, iowait, irq, softirq;
    FILE *stat = fopen("/proc/stat", "r");
    if (!stat || fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait, &irq,
                        &softirq) != 7) {
        fprintf(stderr, "cannot read /proc/stat\n");
        exit(1);
    }
    fclose(stat);
    return (double)(system + irq + softirq) / sysconf(_SC_CLK_TCK);
}

static void *sync_loop(void *path) {
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) { perror(path); exit(1); }
    char block[4096];
    memset(block, 1, sizeof block);
    while (!stop) {
        if (pwrite(fd, block, sizeof block, (syncs % 64) * 4096) != sizeof block) { perror("pwrite"); exit(1); }
        double started = now();
        if (fdatasync(fd) != 0) { perror("fdatasync"); exit(1); }
        waited += now() - started;
        syncs++;
    }
    close(fd);
    return NULL;
}

// Spins for `seconds`; returns millions of rounds per second.
static double spin(double seconds) {
    double end = now() + seconds;
    unsigned long rounds = 0;
    volatile unsigned long sink = 0;
    while (now() < end) {
        for (int k = 0; k < 1000; k++) sink += k;
        rounds++;
    }
    return rounds / seconds / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [SECONDS]\n", argv[0]); return 2; }
    double seconds = argc > 2 ? atof(argv[2]) : 3;
    double kernel = kernel_seconds();
    double alone = spin(seconds);
    double kernelAlone = kernel_seconds() - kernel;
    pthread_t syncer;
    kernel = kernel_seconds();
    pthread_create(&syncer, NULL, sync_loop, argv[1]);
    double beside = spin(seconds);
    stop = 1;
    pthread_join(syncer, NULL);
    double kernelSyncing = kernel_seconds() - kernel;
    unlink(argv[1]);
    printf("fdatasync: %ld in %.1f s, %.1f µs each on average\n", syncs, seconds, waited / syncs * 1e6);
    printf("a spinning thread: %.3f M rounds/s alone, %.3f M beside the syncs (%.0f%% of its speed alone)\n", alone,
           beside, beside / alone * 100);
    printf("the machine's kernel time (system + irq + softirq): %.2f s alone, %.2f s beside the syncs: %.1f µs per sync\n",
           kernelAlone, kernelSyncing, (kernelSyncing - kernelAlone) / syncs * 1e6);
    return 0;
}
