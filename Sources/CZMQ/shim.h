#ifndef FLUXBUS_CZMQ_SHIM_H
#define FLUXBUS_CZMQ_SHIM_H

// The one C header the ZeroMQ target sees. DRAFT APIs stay off: Debian's libzmq is built without them.
#if __has_include(<zmq.h>)
#include <zmq.h>
#else
#error "libzmq's header zmq.h is missing: install libzmq (Debian and Ubuntu: apt-get install libzmq3-dev; macOS: brew install zeromq and pkg-config), or pass its prefix: swift build -Xcc -I<prefix>/include -Xlinker -L<prefix>/lib"
#endif

#endif
