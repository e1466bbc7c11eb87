extension String {
    /// Reads a zero-terminated C string out of a buffer filled by libzmq.
    init(zeroTerminated characters: [CChar]) {
        self = characters.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
