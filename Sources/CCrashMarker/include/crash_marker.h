#ifndef FLUXBUS_CRASH_MARKER_H
#define FLUXBUS_CRASH_MARKER_H

#include <stdint.h>

/// Installs handlers for the signals a crashing handler raises (SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT).
/// While armed, such a signal writes "fluxbus-crash 1\n<sequence>\n<store>\n<signal>\n" to `fd` at offset 0, then
/// hands the signal to whatever handled it before (Swift's backtracer, or the default action). Returns 0, or -1 with
/// errno set. Installing again only changes the file.
int fluxbus_crash_marker_install(int fd);

/// Names the store `index` will arm with; `name` is copied (at most 127 bytes). Indexes run from 0 to 255.
void fluxbus_crash_marker_name(int index, const char *name);

/// Arms the marker for store `index` running `sequence`: two plain stores, nothing more.
void fluxbus_crash_marker_arm(int index, uint64_t sequence);

/// Disarms the marker: a signal now is not the handler's.
void fluxbus_crash_marker_disarm(void);

/// Stops writing to `fd` if it is the marker's file (the worker owning it stopped).
void fluxbus_crash_marker_release(int fd);

#endif
