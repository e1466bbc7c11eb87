/// Whether two runs of bytes are equal, compared eight bytes at a time. The generic `elementsEqual` goes a byte at a
/// time through iterators; the decoder and the log's splicer compare a plan's and outputs' bytes with the last ones,
/// once per entry, to share what repeats.
func sameBytes(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
    guard first.count == second.count else { return false }
    var offset = 0
    while offset + 8 <= first.count {
        guard first.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == second.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        else { return false }
        offset += 8
    }
    while offset < first.count {
        guard first[offset] == second[offset] else { return false }
        offset += 1
    }
    return true
}
