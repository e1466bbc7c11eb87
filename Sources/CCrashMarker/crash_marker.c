// A worker's crash marker: what the signal handler writes when a store's handler kills the process. Everything the
// handler touches is prepared before: the file is open, the names are copied, and arming is two stores, so the hot
// path pays no syscall and the handler calls only async-signal-safe functions (pwrite, sigaction, raise).
#include "crash_marker.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define STORE_SLOTS 256
#define NAME_BYTES 128

static int marker_fd = -1;
static char store_names[STORE_SLOTS][NAME_BYTES];
static volatile sig_atomic_t armed_index = -1;
static volatile uint64_t armed_sequence = 0;

static const int watched[] = {SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
#define WATCHED_COUNT (sizeof(watched) / sizeof(watched[0]))
static struct sigaction previous[WATCHED_COUNT];

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
    }
}

static size_t append(char *buffer, size_t at, size_t capacity, const char *text) {
    size_t length = strlen(text);
    if (at + length > capacity) length = capacity - at;
    memcpy(buffer + at, text, length);
    return at + length;
}

static size_t append_number(char *buffer, size_t at, size_t capacity, uint64_t value) {
    char digits[21];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0);
    while (count > 0 && at < capacity) buffer[at++] = digits[--count];
    return at;
}

static void on_crash(int sig) {
    int index = armed_index;
    if (index >= 0 && index < STORE_SLOTS && marker_fd >= 0) {
        char text[NAME_BYTES + 64];
        size_t at = append(text, 0, sizeof text, "fluxbus-crash 1\n");
        at = append_number(text, at, sizeof text, armed_sequence);
        at = append(text, at, sizeof text, "\n");
        at = append(text, at, sizeof text, store_names[index]);
        at = append(text, at, sizeof text, "\n");
        at = append(text, at, sizeof text, signal_name(sig));
        at = append(text, at, sizeof text, "\n");
        ssize_t ignored = pwrite(marker_fd, text, at, 0);
        (void)ignored;
    }
    // Hand the signal on: the previous handler (or the default action) runs when this one returns, or at once.
    for (size_t i = 0; i < WATCHED_COUNT; i++) {
        if (watched[i] == sig) sigaction(sig, &previous[i], NULL);
    }
    raise(sig);
}

int fluxbus_crash_marker_install(int fd) {
    static int installed = 0;
    marker_fd = fd;
    armed_index = -1;
    // Once per process: installing again would save this handler as the one to hand signals on to.
    if (installed) return 0;
    installed = 1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_crash;
    sigemptyset(&action.sa_mask);
    // The handler runs on whatever stack is left: a stack overflow's SIGSEGV may not reach it, and then the marker
    // is not written (the crash is still a crash; it just is not counted).
    action.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < WATCHED_COUNT; i++) {
        if (sigaction(watched[i], &action, &previous[i]) != 0) return -1;
    }
    return 0;
}

void fluxbus_crash_marker_name(int index, const char *name) {
    if (index < 0 || index >= STORE_SLOTS) return;
    strncpy(store_names[index], name, NAME_BYTES - 1);
    store_names[index][NAME_BYTES - 1] = 0;
}

void fluxbus_crash_marker_arm(int index, uint64_t sequence) {
    armed_sequence = sequence;
    armed_index = index;
}

void fluxbus_crash_marker_disarm(void) { armed_index = -1; }

void fluxbus_crash_marker_release(int fd) {
    if (marker_fd == fd) {
        armed_index = -1;
        marker_fd = -1;
    }
}
