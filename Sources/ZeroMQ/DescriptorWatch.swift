/// A plain descriptor an ``IOLoopScope`` watches for ``IOLoopScope/add(descriptor:onReadable:)``; touched only on the
/// loop's thread, so its flag skips the dynamic exclusivity checks as the scope's own state does.
final class DescriptorWatch {
    let descriptor: Int32
    let onReadable: () throws -> Void
    @exclusivity(unchecked) var isActive = true

    init(descriptor: Int32, onReadable: @escaping () throws -> Void) {
        self.descriptor = descriptor
        self.onReadable = onReadable
    }
}
