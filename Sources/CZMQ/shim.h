#ifndef FLUXBUS_CZMQ_SHIM_H
#define FLUXBUS_CZMQ_SHIM_H

// The one C header the ZeroMQ target sees. DRAFT APIs stay off: Debian's libzmq is built without them.
#include <zmq.h>

#endif
