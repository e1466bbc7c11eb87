#!/usr/bin/env python3
"""A FluxBus worker written in Python from docs/PROTOCOL.md (FLXB/8) alone.

It hosts one store of the `counter` kind: the store handles `counter.add {"by":N}` and its state
is `{"value":N}`. The worker joins a coordinator, catches up by replay, runs and acknowledges
every dispatch that plans its store, re-acknowledges duplicates without applying them twice,
fetches what it missed, answers state requests, heartbeats, joins again when the coordinator
asks it to, and leaves with GOODBYE on SIGTERM or SIGINT.

    python3 fluxbus_worker.py --id py1 --coordinator tcp://127.0.0.1:7401 --store counter

Exit codes follow the fluxbus CLI: 0 after a clean stop, 2 for usage, 4 when the coordinator
refuses the worker (REJECT), or when its history is behind this worker's state.

Only the standard library and pyzmq are needed. The store declares no dependencies, so it never
waits for another store: RELEASE messages never concern it and are ignored.
"""

import argparse
import collections
import json
import os
import signal
import struct
import sys
import time

import zmq

# --- Wire constants (PROTOCOL.md, "Framing and encoding") -----------------------------------

SIGNATURE = b"FLXB\x08"  # frame 0 of every message, and the SUB subscription

HELLO, WELCOME, REJECT, READY, ACTION, RELEASE, ACK, FETCH, REPLAY, HEARTBEAT, GOODBYE, SNAPSHOT = range(1, 13)
DISPATCH, RESULT, ERROR, STATUS_REQUEST, STATUS, GRAPH_REQUEST, GRAPH = range(0x10, 0x17)
STATE_REQUEST, STATE, COMPLETED = 0x17, 0x18, 0x19
DISPATCH_BATCH, BATCH_RESULT, BUNDLE, PULL, CHUNK = 0x1A, 0x1B, 0x1C, 0x1D, 0x1E
ACTIONS, ACKS, COMPLETIONS = 0x1F, 0x20, 0x21  # runs: each stands for consecutive ACTIONs, ACKs, COMPLETEDs
COMMAND_NAMES = {
    1: "HELLO", 2: "WELCOME", 3: "REJECT", 4: "READY", 5: "ACTION", 6: "RELEASE", 7: "ACK", 8: "FETCH",
    9: "REPLAY", 10: "HEARTBEAT", 11: "GOODBYE", 12: "SNAPSHOT", 0x10: "DISPATCH", 0x11: "RESULT",
    0x12: "ERROR", 0x13: "STATUS_REQUEST", 0x14: "STATUS", 0x15: "GRAPH_REQUEST", 0x16: "GRAPH",
    0x17: "STATE_REQUEST", 0x18: "STATE", 0x19: "COMPLETED", 0x1A: "DISPATCH_BATCH", 0x1B: "BATCH_RESULT",
    0x1C: "BUNDLE", 0x1D: "PULL", 0x1E: "CHUNK", 0x1F: "ACTIONS", 0x20: "ACKS", 0x21: "COMPLETIONS",
}
PUBLISHED = {ACTION, HEARTBEAT, COMPLETED}  # the only commands that travel on PUB → SUB

OK, FAILED, SKIPPED, LOST, POISONED = range(5)  # status codes
REJECT_RETRY = {8, 10}                # too many, worker id busy: HELLO again later
CLAIM_REFUSALS = {5, 10}              # meant for a process claiming our id; a joined worker ignores them
ERROR_UNKNOWN_STORE = 3
ERROR_INVALID_REQUEST, ERROR_TRANSFER_GONE = 2, 10
CHUNK_BYTES = 1 << 20                 # what a STATE carries inline and a PULL asks for (PROTOCOL.md, "Transfers")

MAX_FRAME_BYTES = 16 << 20
MAX_STRING_BYTES = 4096
MAX_BYTES_FIELD = 8 << 20
FETCH_RETRY = 1.0                     # seconds: a FETCH whose answer never ended is sent again
MESSAGE_LIMIT = 1024                  # failure messages are shortened well inside MAX_STRING_BYTES

EXIT_OK, EXIT_USAGE, EXIT_REFUSED = 0, 2, 4


class Malformed(ValueError):
    """A message this worker cannot decode: it is counted, logged and dropped, never fatal."""


# --- Encoding and decoding --------------------------------------------------------------------

class Writer:
    """Builds a body frame: the command byte, then fields in order, big-endian, no padding."""

    def __init__(self, command):
        self.body = bytearray([command])

    def u8(self, value):
        self.body += struct.pack(">B", value)
        return self

    def u16(self, value):
        self.body += struct.pack(">H", value)
        return self

    def u32(self, value):
        self.body += struct.pack(">I", value)
        return self

    def u64(self, value):
        self.body += struct.pack(">Q", value)
        return self

    def bool(self, value):
        return self.u8(1 if value else 0)

    def string(self, text):
        data = text.encode("utf-8")
        if len(data) > MAX_STRING_BYTES:
            raise ValueError(f"string of {len(data)} bytes exceeds {MAX_STRING_BYTES}")
        self.u16(len(data))
        self.body += data
        return self

    def bytes(self, data):
        self.body += struct.pack(">I", len(data))
        self.body += data
        return self

    def optional_bytes(self, data):
        return self.bool(False) if data is None else self.bool(True).bytes(data)

    def strings(self, items):
        self.u16(len(items))
        for item in items:
            self.string(item)
        return self

    def frames(self):
        return [SIGNATURE, bytes(self.body)]


class Reader:
    """Reads a body frame strictly: every length is checked before use, and anything malformed
    (truncated, over a limit, a bad bool or status, invalid UTF-8, trailing bytes) raises Malformed."""

    def __init__(self, body):
        if len(body) > MAX_FRAME_BYTES:
            raise Malformed(f"body of {len(body)} bytes exceeds {MAX_FRAME_BYTES}")
        self.body, self.at = body, 1  # body[0] is the command byte

    def take(self, count):
        if count > len(self.body) - self.at:
            raise Malformed(f"truncated: {count} bytes wanted, {len(self.body) - self.at} left")
        self.at += count
        return self.body[self.at - count:self.at]

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack(">H", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def u64(self):
        return struct.unpack(">Q", self.take(8))[0]

    def bool(self):
        value = self.u8()
        if value > 1:
            raise Malformed(f"bool {value}")
        return value == 1

    def status(self):
        value = self.u8()
        if value > POISONED:
            raise Malformed(f"status {value}")
        return value

    def string(self):
        length = self.u16()
        if length > MAX_STRING_BYTES:
            raise Malformed(f"string of {length} bytes exceeds {MAX_STRING_BYTES}")
        try:
            return bytes(self.take(length)).decode("utf-8")  # strict: no surrogates, no overlongs
        except UnicodeDecodeError as error:
            raise Malformed(f"invalid UTF-8: {error}") from None

    def bytes(self):
        length = self.u32()
        if length > MAX_BYTES_FIELD:
            raise Malformed(f"bytes of {length} exceeds {MAX_BYTES_FIELD}")
        return bytes(self.take(length))

    def optional(self, read):
        return read() if self.bool() else None

    def list(self, read, smallest_item):
        """A u16 count, then that many items, each at least `smallest_item` bytes long."""
        count = self.u16()
        if count * smallest_item > len(self.body) - self.at:
            raise Malformed(f"a list of {count} cannot fit in {len(self.body) - self.at} bytes")
        return [read() for _ in range(count)]

    def strings(self):
        return self.list(self.string, 2)

    def end(self):
        if self.at != len(self.body):
            raise Malformed(f"{len(self.body) - self.at} bytes after the last field")


Action = collections.namedtuple("Action", "epoch sequence action_type payload error plan")
PlanStep = collections.namedtuple("PlanStep", "store waits_for")
StoreOutput = collections.namedtuple("StoreOutput", "store status message output")
Outcome = collections.namedtuple("Outcome", "store worker status message digest")


def read_plan_step(r):
    return PlanStep(r.string(), r.strings())


def read_action(r):
    """The fields ACTION and ReplayEntry share: epoch, sequence, type, payload, error, plan."""
    return Action(r.u64(), r.u64(), r.string(), r.bytes(), r.optional(r.string),
                  r.list(lambda: read_plan_step(r), 4))


def read_store_output(r):
    return StoreOutput(r.string(), r.status(), r.string(), r.optional(r.bytes))


def read_outcome(r):
    return Outcome(r.string(), r.string(), r.status(), r.string(), r.u64())


def decode(body):
    """Decodes the body of a message a coordinator may send a worker: (command, fields)."""
    if not body:
        raise Malformed("empty body")
    command, r = body[0], Reader(body)
    if command == WELCOME:
        fields = dict(epoch=r.u64(), sequence=r.u64(), endpoint=r.string(),
                      heartbeat_ms=r.u32(), deadline_ms=r.u32())
    elif command == REJECT:
        fields = dict(code=r.u16(), reason=r.string())
    elif command == ACTION:
        fields = dict(action=read_action(r), traceparent=r.string())  # this worker does not trace
    elif command == RELEASE:
        fields = dict(epoch=r.u64(), sequence=r.u64(), outputs=r.list(lambda: read_store_output(r), 6))
    elif command == REPLAY:
        def entry():
            action = read_action(r)
            return action, r.list(lambda: read_store_output(r), 6)
        fields = dict(epoch=r.u64(), entries=r.list(entry, 27), last=r.bool(),
                      poisoned=r.list(lambda: (r.u64(), r.string(), r.string()), 12))
    elif command == HEARTBEAT:
        fields = dict(epoch=r.u64(), sequence=r.u64())
    elif command == GOODBYE:
        fields = dict(reason=r.string())
    elif command == SNAPSHOT:
        fields = dict(epoch=r.u64(), store=r.string(), sequence=r.u64(), digest=r.u64(), size=r.u64(),
                      checksum=r.u64(), chain=r.u64(), transfer=r.string(), state=r.bytes())
    elif command == PULL:
        fields = dict(transfer=r.string(), offset=r.u64(), max_bytes=r.u32())
    elif command == CHUNK:
        fields = dict(transfer=r.string(), offset=r.u64(), data=r.bytes())
    elif command == RESULT:
        fields = dict(request_id=r.string(), epoch=r.u64(), sequence=r.u64(), elapsed=r.u64(),
                      outcomes=r.list(lambda: read_outcome(r), 15),
                      trace=r.list(lambda: (r.string(), r.string(), r.u64(), r.u64()), 20))
    elif command == ERROR:
        fields = dict(request_id=r.string(), code=r.u16(), message=r.string())
    elif command == STATE_REQUEST:
        fields = dict(request_id=r.string(), store=r.string())
    elif command == COMPLETED:
        fields = dict(epoch=r.u64(), sequence=r.u64(), action_type=r.string(), elapsed=r.u64(),
                      outcomes=r.list(lambda: read_outcome(r), 15))
    elif command == ACTIONS:
        fields = dict(epoch=r.u64(), first=r.u64(), action_type=r.string(), plan=r.list(lambda: read_plan_step(r), 4),
                      traceparent=r.string(), entries=r.list(lambda: (r.bytes(), r.optional(r.string)), 5))
    elif command == COMPLETIONS:
        fields = dict(epoch=r.u64(), first=r.u64(), count=r.u32(), action_type=r.string(),
                      outcomes=r.list(lambda: read_outcome(r), 15), elapsed=r.bytes(), digests=r.bytes())
    elif command in COMMAND_NAMES:
        raise Malformed(f"{COMMAND_NAMES[command]} is never sent to a worker")
    else:
        raise Malformed(f"unknown command 0x{command:02x}")
    r.end()
    return command, fields


def expand(command, fields):
    """The messages a run stands for (PROTOCOL.md, ACTIONS): ACTIONS as its ACTIONs, COMPLETIONS as its COMPLETEDs, in
    order; any other message as itself."""
    if command == ACTIONS:
        entries, first = fields["entries"], fields["first"]
        if not entries or first + len(entries) - 1 > 0xFFFF_FFFF_FFFF_FFFF:
            raise Malformed(f"an ACTIONS of {len(entries)} from #{first}")
        return [(ACTION, dict(action=Action(fields["epoch"], first + i, fields["action_type"], payload, error, fields["plan"]),
                              traceparent=fields["traceparent"]))
                for i, (payload, error) in enumerate(entries)]
    if command == COMPLETIONS:
        count, first, outcomes = fields["count"], fields["first"], fields["outcomes"]
        if (count == 0 or first + count - 1 > 0xFFFF_FFFF_FFFF_FFFF or any(o.digest for o in outcomes)
                or len(fields["elapsed"]) != 8 * count or len(fields["digests"]) != 8 * count * len(outcomes)):
            raise Malformed(f"a COMPLETIONS of {count} whose lengths disagree")
        elapsed = struct.unpack(f">{count}Q", fields["elapsed"])
        digests = struct.unpack(f">{count * len(outcomes)}Q", fields["digests"])
        return [(COMPLETED, dict(epoch=fields["epoch"], sequence=first + i, action_type=fields["action_type"], elapsed=elapsed[i],
                                 outcomes=[o._replace(digest=digests[i * len(outcomes) + j]) for j, o in enumerate(outcomes)]))
                for i in range(count)]
    return [(command, fields)]


def unbundle(body):
    """The bodies a message holds: its own, or each of a BUNDLE's, which must all decode (all or nothing)."""
    if not body or body[0] != BUNDLE:
        return [body]
    r = Reader(body)
    bodies = r.list(r.bytes, 4)
    r.end()
    if not bodies:
        raise Malformed("an empty BUNDLE")
    if any(inner[:1] == bytes([BUNDLE]) for inner in bodies):
        raise Malformed("a BUNDLE inside a BUNDLE")
    return bodies


# --- The state digest (PROTOCOL.md, Appendix A) -----------------------------------------------

def fnv1a64(data):
    digest = 0xCBF29CE484222325
    for byte in data:
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return digest


def chain_next(previous, sequence, action_type, payload, error):
    """The log chain after one more entry (PROTOCOL.md, Appendix D): FNV-1a 64 over the previous
    value, the sequence, the type, the payload and the error, each in its wire encoding."""
    kind = action_type.encode("utf-8")
    data = struct.pack(">QQH", previous, sequence, len(kind)) + kind + struct.pack(">I", len(payload)) + bytes(payload)
    if error is None:
        data += b"\x00"
    else:
        text = error.encode("utf-8")
        data += b"\x01" + struct.pack(">H", len(text)) + text
    return fnv1a64(data)


def canonical_json(value):
    """The bytes Swift's JSONEncoder writes with [.sortedKeys, .withoutEscapingSlashes]: sorted
    keys, no whitespace, '/' unescaped, non-ASCII as UTF-8, control characters escaped as
    Python escapes them. Swift on Linux sorts keys in code-point order, as Python does (keys
    not in Unicode normal form might sort differently). Integers only: Swift writes floating
    point numbers in its own shortest form."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# --- The store ---------------------------------------------------------------------------------

class CounterStore:
    """The `counter` kind: `counter.add {"by":N}` adds N; the state is `{"value":N}`."""

    depends_on, handles_all, handles = [], False, ["counter.add"]
    INT64 = range(-(1 << 63), 1 << 63)  # Swift's Int: the other replicas cannot hold more

    def __init__(self, name):
        self.name = name
        self.value = 0
        self.last_applied = 0
        self.chain = 0  # the log chain at last_applied; None once a SNAPSHOT replaced the history
        self.applied_epoch = 0  # the epoch of the ACTION, REPLAY entry or SNAPSHOT that brought last_applied

    def state_bytes(self):
        return canonical_json({"value": self.value})

    def digest(self):
        return fnv1a64(self.state_bytes())

    def restore(self, state):
        value = json.loads(state)["value"]
        if type(value) is not int or value not in self.INT64:
            raise ValueError(f"not a counter state: {state!r}")
        self.value = value

    def handle(self, action_type, payload, error):
        """Runs the handler; returns the output to publish (None: a counter publishes none).
        Raising makes the result `failed` with the exception's text, and leaves the state as it was."""
        if action_type != "counter.add":
            raise ValueError(f"store `{self.name}` has no handler for `{action_type}`")
        by = json.loads(payload)["by"]
        if type(by) is float and by.is_integer():
            by = int(by)
        if type(by) is not int:
            raise ValueError(f"`by` must be an integer, not {json.dumps(by)}")
        if self.value + by not in self.INT64:
            raise ValueError(f"counter overflow: {self.value} + {by}")
        self.value += by
        return None


# --- The worker --------------------------------------------------------------------------------

JOINING, CATCHING_UP, LIVE = "joining", "catching up", "live"


class Worker:
    def __init__(self, worker_id, endpoint, store, verbose=False):
        self.id, self.endpoint, self.store, self.verbose = worker_id, endpoint, store, verbose
        self.initial_state = store.state_bytes()  # what an empty SNAPSHOT restores
        self.instance = int.from_bytes(os.urandom(8), "big") or 1  # random, non-zero, per process
        self.context = zmq.Context()
        self.poller = zmq.Poller()
        self.dealer = self.sub = self.sub_endpoint = None

        self.phase = JOINING
        self.epoch = 0
        self.known = 0                # the newest sequence the coordinator announced
        self.heard_on_sub = False     # a message of this epoch arrived on SUB since WELCOME
        self.pending = {}             # sequence → ACTION that arrived ahead of its turn
        self.acks = collections.OrderedDict()  # sequence → the results acknowledged, to send again
        self.heartbeat, self.deadline = 0.5, 2.0
        self.hello_wait, self.next_hello = 1.0, 0.0
        self.last_sent = self.last_heard = time.monotonic()
        self.fetch_sent_at = None     # when the one FETCH outstanding was sent
        self.applied_when_asked = 0   # what we had applied then
        self.lose_bundle = None       # tests: the BUNDLE of ACTIONs on SUB to lose on purpose (1 = the first)
        self.resent_actions = 0       # ACTIONs the coordinator sent again directly (gap repair),
        self.resent_messages = 0      # and the ZeroMQ messages that carried them
        self.malformed, self.malformed_logged_at = 0, 0.0
        self.stopping = False
        self.download = None          # the SNAPSHOT arriving in chunks: its fields and the bytes so far
        self.held = {}                # STATE transfer id → its bytes, while the coordinator PULLs them

    @property
    def applied(self):
        return self.store.last_applied  # one store: the worker's applied sequence is the store's

    # --- Sockets ---

    def connect(self):
        self.dealer = self.context.socket(zmq.DEALER)
        # One routing id per process (worker id, "/", instance in hex), so a duplicate cannot take ours over.
        self.dealer.setsockopt(zmq.ROUTING_ID, f"{self.id}/{self.instance:x}".encode("utf-8"))
        self.dealer.setsockopt(zmq.LINGER, 0)
        # No queueing while no connection is up: a HELLO is sent only once the DEALER is writable, so
        # HELLOs never pile up and bring one WELCOME (and one catch-up) each.
        self.dealer.setsockopt(zmq.IMMEDIATE, 1)
        self.dealer.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES + 64)
        self.dealer.setsockopt(zmq.SNDHWM, 100_000)
        self.dealer.setsockopt(zmq.RCVHWM, 100_000)
        self.dealer.connect(self.endpoint)
        self.poller.register(self.dealer, zmq.POLLIN)

    def subscribe(self, endpoint):
        if self.sub is not None and self.sub_endpoint == endpoint:
            return
        self.close_sub()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES + 64)
        self.sub.setsockopt(zmq.RCVHWM, 100_000)
        self.sub.setsockopt(zmq.SUBSCRIBE, SIGNATURE)
        self.sub.connect(endpoint)
        self.sub_endpoint = endpoint
        self.poller.register(self.sub, zmq.POLLIN)

    def close_sub(self):
        if self.sub is not None:
            self.poller.unregister(self.sub)
            self.sub.close(linger=0)
            self.sub = self.sub_endpoint = None

    def reconnect(self):
        """The coordinator is silent: open fresh sockets and join again."""
        self.poller.unregister(self.dealer)
        self.dealer.close(linger=0)
        self.close_sub()
        self.connect()
        self.phase, self.download = JOINING, None
        self.hello_wait, self.next_hello = 1.0, 0.0  # HELLO once the new connection is up

    def send(self, frames):
        try:
            self.dealer.send_multipart(frames, flags=zmq.NOBLOCK)
        except zmq.Again:
            self.log(f"send queue full, dropped {COMMAND_NAMES[frames[1][0]]}")
        self.last_sent = time.monotonic()

    def log(self, text):
        print(f"{time.strftime('%H:%M:%S')} fluxbus_worker {self.id}: {text}", file=sys.stderr, flush=True)

    # --- Joining ---

    def say_hello(self):
        s = self.store
        self.phase = JOINING
        self.download = None  # the coordinator sends the snapshots we need afresh
        self.send(Writer(HELLO).string(self.id).u64(self.instance).u16(1)
                  .string(s.name).strings(s.depends_on).bool(s.handles_all).strings(s.handles)
                  .u64(s.last_applied).u64(s.last_applied).u64(s.chain or 0).u64(s.applied_epoch)
                  .u64(0).string("").string("")  # no crash to report: a Python exception is a failure, not a crash
                  .frames())
        self.next_hello = time.monotonic() + self.hello_wait
        self.hello_wait = min(self.hello_wait * 2, 16.0)  # 1 s, 2 s, … up to 16 s until answered

    def join_again(self):
        self.hello_wait = 1.0
        self.say_hello()

    def on_welcome(self, epoch, sequence, endpoint, heartbeat_ms, deadline_ms):
        # WELCOME's sequence may be below what we applied: the dispatch in flight when the coordinator
        # stopped is published again with its sequence, and we acknowledge it from memory. A coordinator
        # whose log lost what we applied refuses our HELLO instead (REJECT code 9).
        # Every WELCOME (a repeated HELLO gets another) registers the worker as catching up again.
        if epoch != self.epoch:
            self.pending = {}  # kept ACTIONs of an earlier epoch: the new one publishes them again
        self.phase, self.epoch = CATCHING_UP, epoch
        self.heartbeat, self.deadline = max(heartbeat_ms, 10) / 1000, max(deadline_ms, 40) / 1000
        self.known = sequence
        self.heard_on_sub = False
        self.fetch_sent_at = None
        self.subscribe(endpoint)
        self.log(f"welcomed: epoch {epoch}, sequence {sequence}, applied {self.applied}, publish {endpoint}")
        self.catch_up()

    def catch_up(self):
        """FETCHes what has been announced and not applied, one FETCH outstanding at a time (until the
        REPLAY marked last answers it, or one second without it), and says READY once caught up with a
        working subscription."""
        # Up to the announced sequence, or just before the first ACTION kept for later.
        if self.download is not None:
            return  # a snapshot still arriving moves `applied`: FETCH after it
        target = min(self.pending) - 1 if self.pending else self.known
        if self.applied < target:
            now = time.monotonic()
            if self.fetch_sent_at is None or now - self.fetch_sent_at >= FETCH_RETRY:
                self.fetch_sent_at, self.applied_when_asked = now, self.applied
                self.send(Writer(FETCH).u64(self.epoch).u64(self.applied + 1).u64(target).frames())
        elif self.phase == CATCHING_UP and self.heard_on_sub and not self.pending and self.applied >= self.known:
            self.phase = LIVE
            self.send(Writer(READY).u64(self.epoch).u64(self.applied).frames())
            self.log(f"live at sequence {self.applied}")

    # --- Dispatches ---

    def receive_action(self, action, announce=True):
        if announce:
            self.known = max(self.known, action.sequence)
        if action.sequence <= self.applied:
            results = self.acks.get(action.sequence)  # a duplicate: acknowledge again, never apply twice
            if results is not None:
                self.acknowledge(action, results)  # under this ACTION's epoch, which may be newer
            return self.catch_up()
        if action.sequence > self.applied + 1:
            self.pending[action.sequence] = action  # a gap: keep it, fetch what comes before it
            return self.catch_up()
        self.run(action, live=True)
        while self.applied + 1 in self.pending:
            self.run(self.pending.pop(self.applied + 1), live=True)
        self.pending = {seq: a for seq, a in self.pending.items() if seq > self.applied}
        self.catch_up()

    def run(self, action, live, poisoned=False):
        """Runs one dispatch, the next in sequence. Live dispatches are acknowledged; replayed ones
        (already completed) are not. A poisoned one (REPLAY's marks) is applied without running the store."""
        store, results = self.store, []
        for step in action.plan:
            if step.store != store.name or store.last_applied >= action.sequence or poisoned:
                continue
            before = store.value
            status, message, output = OK, "", None
            if step.waits_for:
                # Impossible for a store that declares no dependencies; never wait for them.
                status, message = SKIPPED, "waits for " + ", ".join(step.waits_for) + ", which this worker cannot wait for"
            else:
                try:
                    output = store.handle(action.action_type, action.payload, action.error)
                except Exception as failure:  # the handler threw: report it, keep the old state
                    store.value = before
                    status, message = FAILED, shorten(str(failure) or type(failure).__name__)
            results.append((store.name, status, message, output, store.digest()))
        if store.chain is not None and action.sequence == store.last_applied + 1:
            store.chain = chain_next(store.chain, action.sequence, action.action_type, action.payload, action.error)
        store.last_applied = action.sequence
        store.applied_epoch = action.epoch
        if self.verbose:
            self.log(f"applied #{action.sequence} {action.action_type} → {store.state_bytes().decode()}")
        if live and results:
            self.acknowledge(action, results)
            self.acks[action.sequence] = results
            while len(self.acks) > 1024:
                self.acks.popitem(last=False)

    def acknowledge(self, action, results):
        writer = Writer(ACK).u64(action.epoch).u64(action.sequence).u16(len(results))
        for name, status, message, output, digest in results:
            # readDigest 0: this worker runs no store that reads a dependency's outcome, so it has nothing to say
            writer.string(name).u8(status).string(message).optional_bytes(output).u64(digest).u64(0)
        writer.u16(0)  # timings: this worker does not trace
        self.send(writer.frames())

    def apply_replay(self, entries, last, poisoned=()):
        skip = {sequence for sequence, store, _reason in poisoned if store == self.store.name}
        for action, _recorded_outputs in entries:  # no dependencies: recorded outputs are not needed
            if action.sequence <= self.applied:
                continue
            if action.sequence > self.applied + 1:
                break  # not contiguous: fetch again from applied + 1
            if action.sequence in skip:
                self.log(f"skipping #{action.sequence}: poisoned for {self.store.name}")
            self.run(action, live=False, poisoned=action.sequence in skip)
        while self.applied + 1 in self.pending:
            self.run(self.pending.pop(self.applied + 1), live=True)
        self.pending = {seq: a for seq, a in self.pending.items() if seq > self.applied}
        # The REPLAY marked last ends the answer (the ACTIONs in flight that it re-sent came before
        # it). If the answer moved us on, the next FETCH may go at once; if it brought nothing, the
        # range has not completed yet: wait, rather than ask again in a loop.
        if last and self.applied > self.applied_when_asked:
            self.fetch_sent_at = None
        self.catch_up()

    def on_snapshot_header(self, f):
        """A SNAPSHOT opens a transfer: whole if its bytes are all there, else PULL the rest (one at a time)."""
        if f["store"] != self.store.name or self.phase == LIVE or len(f["state"]) > f["size"]:
            return self.log(f"dropped a SNAPSHOT of {f['store']} at #{f['sequence']}")
        self.download = dict(f, data=bytearray(f["state"]))
        self.continue_download()

    def continue_download(self):
        d = self.download
        if len(d["data"]) < d["size"]:
            count = min(CHUNK_BYTES, d["size"] - len(d["data"]))
            return self.send(Writer(PULL).string(d["transfer"]).u64(len(d["data"])).u32(count).frames())
        self.download = None
        if fnv1a64(d["data"]) != d["checksum"]:
            self.malformed += 1
            self.log(f"a SNAPSHOT of {d['store']} does not match its checksum: joining again")
            return self.join_again()
        self.on_snapshot(d["store"], d["sequence"], bytes(d["data"]))

    def on_chunk(self, transfer, offset, data):
        d = self.download
        if d is None or d["transfer"] != transfer:
            return  # a late chunk of a download already abandoned
        if offset != len(d["data"]) or not data or offset + len(data) > d["size"]:
            self.download = None
            self.malformed += 1
            self.log(f"a CHUNK of {transfer} at {offset} is not the one expected: joining again")
            return self.join_again()
        d["data"] += data
        self.continue_download()

    def on_snapshot(self, store, sequence, state):
        # Sent before WELCOME (joining), or while catching up. An empty state is the initial state.
        if sequence <= self.store.last_applied:
            return self.log(f"dropped a SNAPSHOT of {store} at #{sequence}")
        self.store.restore(state or self.initial_state)
        self.store.last_applied = sequence
        self.store.chain = None
        self.store.applied_epoch = self.epoch
        self.pending = {seq: a for seq, a in self.pending.items() if seq > sequence}
        self.fetch_sent_at = None
        self.log(f"restored {store} from a snapshot at #{sequence}")
        self.catch_up()

    def on_state_request(self, request_id, store):
        if store != self.store.name:
            return self.send(Writer(ERROR).string(request_id).u16(ERROR_UNKNOWN_STORE)
                             .string(f"worker `{self.id}` does not host store `{store}`").frames())
        state = self.store.state_bytes()
        if len(state) > CHUNK_BYTES:
            self.held[request_id] = state
            while len(self.held) > 4:  # at most 4 held: the oldest goes
                self.held.pop(next(iter(self.held)))
        self.send(Writer(STATE).string(request_id).string(store).string(self.id).u64(self.applied)
                  .u64(self.store.digest()).u64(len(state)).u64(fnv1a64(state)).bytes(state[:CHUNK_BYTES]).frames())

    def on_pull(self, transfer, offset, max_bytes):
        state = self.held.get(transfer)
        if state is None:
            return self.send(Writer(ERROR).string(transfer).u16(ERROR_TRANSFER_GONE)
                             .string(f"worker `{self.id}` no longer holds transfer `{transfer}`").frames())
        if not 0 < max_bytes <= MAX_BYTES_FIELD:
            return self.send(Writer(ERROR).string(transfer).u16(ERROR_INVALID_REQUEST)
                             .string(f"a PULL must ask for 1 to {MAX_BYTES_FIELD} bytes").frames())
        data = state[offset:offset + max_bytes]
        if offset + len(data) >= len(state):
            del self.held[transfer]  # the last chunk: the transfer is done
        self.send(Writer(CHUNK).string(transfer).u64(offset).bytes(data).frames())

    # --- Input ---

    def current_epoch(self, epoch, from_sub):
        """Whether a stream message belongs to our epoch; another epoch on SUB means the
        coordinator restarted, so join again."""
        if self.phase == JOINING:
            return False
        if epoch == self.epoch:
            if from_sub and not self.heard_on_sub:
                self.heard_on_sub = True
            return True
        if from_sub:
            self.log(f"the coordinator's epoch is now {epoch}, not {self.epoch}: joining again")
            self.join_again()
        return False

    def handle(self, frames, from_sub):
        if len(frames) != 2 or frames[0] != SIGNATURE:
            return self.drop(f"{len(frames)} frames, signature {frames[0][:8].hex()}")
        try:
            messages = [message for body in unbundle(frames[1]) for message in expand(*decode(body))]
        except Malformed as error:
            return self.drop(str(error))
        actions = [f["action"].sequence for command, f in messages if command == ACTION]
        if from_sub and len(messages) > 1 and actions and self.lose_bundle is not None:
            self.lose_bundle -= 1
            if self.lose_bundle == 0:
                self.lose_bundle = None
                return self.log(f"lost on purpose: a BUNDLE of {len(actions)} ACTIONs, #{actions[0]} to #{actions[-1]}")
        if not from_sub and actions:
            self.resent_actions += len(actions)
            self.resent_messages += 1
        for command, f in messages:
            self.handle_one(command, f, from_sub)

    def handle_one(self, command, f, from_sub):
        if from_sub and command not in PUBLISHED:
            return self.drop(f"{COMMAND_NAMES[command]} on SUB")
        self.last_heard = time.monotonic()

        if command == WELCOME:
            self.on_welcome(f["epoch"], f["sequence"], f["endpoint"], f["heartbeat_ms"], f["deadline_ms"])
        elif command == REJECT:
            if f["code"] in CLAIM_REFUSALS and self.phase != JOINING:
                # ROUTER_HANDOVER sends replies for our id to whichever process connected with it last.
                self.log(f"ignored a refusal meant for another process claiming this id: {f['reason']}")
            elif f["code"] in REJECT_RETRY:
                self.log(f"coordinator says wait (code {f['code']}): {f['reason']}")
                self.phase, self.next_hello = JOINING, time.monotonic() + max(self.deadline, self.hello_wait)
            else:
                print(f"fluxbus_worker {self.id}: refused by the coordinator (code {f['code']}): {f['reason']}",
                      file=sys.stderr, flush=True)
                raise SystemExit(EXIT_REFUSED)
        elif command == GOODBYE:
            # Before WELCOME it answers something sent to an earlier registration: our HELLO is on its way.
            if not self.stopping and self.phase != JOINING:
                self.log(f"the coordinator said GOODBYE ({f['reason']}): joining again")
                self.join_again()
        elif command == ACTION:
            action = f["action"]
            if self.current_epoch(action.epoch, from_sub):
                self.receive_action(action)
        elif command in (HEARTBEAT, COMPLETED):
            if self.current_epoch(f["epoch"], from_sub):
                self.known = max(self.known, f["sequence"])
                self.catch_up()
        elif command == REPLAY:
            if self.phase != JOINING and f["epoch"] == self.epoch:
                self.apply_replay(f["entries"], f["last"], f["poisoned"])
        elif command == SNAPSHOT:
            if self.phase == JOINING or f["epoch"] == self.epoch:
                self.on_snapshot_header(f)
        elif command == CHUNK:
            self.on_chunk(f["transfer"], f["offset"], f["data"])
        elif command == PULL:
            self.on_pull(f["transfer"], f["offset"], f["max_bytes"])
        elif command == ERROR and self.download is not None and f["request_id"] == self.download["transfer"]:
            self.log(f"the coordinator no longer has the snapshot ({f['message']}): joining again")
            self.download = None
            self.join_again()
        elif command == STATE_REQUEST:
            self.on_state_request(f["request_id"], f["store"])
        # RELEASE: our store waits for nothing. RESULT, ERROR: we never DISPATCH. Both: ignore.

    def drop(self, reason):
        self.malformed += 1
        now = time.monotonic()
        if now - self.malformed_logged_at >= 1:
            self.malformed_logged_at = now
            self.log(f"dropped a malformed message ({reason}); {self.malformed} so far")

    # --- The loop ---

    def tick(self):
        now = time.monotonic()
        if self.phase == JOINING:
            if now >= self.next_hello:
                if self.dealer.poll(0, zmq.POLLOUT):
                    self.say_hello()
                else:
                    self.next_hello = now + 0.05  # not connected yet: a HELLO now would be dropped
            return
        if now - self.last_heard > self.deadline:
            self.log(f"the coordinator has been silent for {now - self.last_heard:.1f} s: reconnecting")
            self.last_heard = now
            return self.reconnect()
        if now - self.last_sent >= self.heartbeat:
            self.send(Writer(HEARTBEAT).u64(self.epoch).u64(self.applied).frames())
        self.catch_up()  # a FETCH nobody answered is asked again; READY when due

    def run_forever(self):
        self.connect()
        self.log(f"joining {self.endpoint} with store `{self.store.name}` (counter)")
        self.next_hello = 0.0  # HELLO as soon as the DEALER is connected (tick)
        while not self.stopping:
            timeout = min(self.heartbeat / 2, 0.1)
            for socket, _ in self.poller.poll(timeout * 1000):
                from_sub = socket is self.sub
                for _ in range(1000):  # drain, but let the timers run now and then
                    try:
                        frames = socket.recv_multipart(flags=zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self.handle(frames, from_sub)
                    if self.stopping or socket not in (self.dealer, self.sub):
                        break
            self.tick()
        self.leave()

    def leave(self):
        self.send(Writer(GOODBYE).string("shutting down").frames())
        self.dealer.close(linger=1000)  # let the GOODBYE go out
        self.close_sub()
        self.context.term()
        self.log(f"stopped at sequence {self.applied}; the coordinator re-sent {self.resent_actions} ACTIONs directly, "
                 f"in {self.resent_messages} messages")


def shorten(text, limit=MESSAGE_LIMIT):
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + "…"


def main(argv=None):
    parser = argparse.ArgumentParser(description="A FluxBus worker hosting one counter store (FLXB/8).")
    parser.add_argument("--id", required=True, help="the worker id, also its DEALER routing id")
    parser.add_argument("--coordinator", default=os.environ.get("FLUXBUS_COORDINATOR", "tcp://127.0.0.1:7401"),
                        help="the coordinator's control endpoint (default: $FLUXBUS_COORDINATOR or tcp://127.0.0.1:7401)")
    parser.add_argument("--store", required=True, help="the name of the counter store to host")
    parser.add_argument("--verbose", action="store_true", help="log every dispatch applied")
    parser.add_argument("--lose-bundle", type=int, metavar="N",
                        help="for tests: lose the Nth BUNDLE of ACTIONs that arrives on SUB, as PUB/SUB may")
    args = parser.parse_args(argv)
    worker_id = args.id.encode("utf-8")
    if not 1 <= len(worker_id) <= 255 or worker_id[0] == 0 or not args.store:
        parser.error("--id must be 1 to 255 bytes, not starting with a zero byte; --store must not be empty")

    worker = Worker(args.id, args.coordinator, CounterStore(args.store), verbose=args.verbose)
    worker.lose_bundle = args.lose_bundle

    def stop(signum, _frame):
        worker.stopping = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may start us with these signals blocked (Foundation's Process passes its thread's mask on).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    worker.run_forever()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
