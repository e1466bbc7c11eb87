/// The rule for names on the bus: worker ids, store names, and the names in an authorized-keys file and key files.
/// Short, and safe in logs, file names and the wire.
///
/// ```swift
/// BusName.isValid("price-worker")   // true
/// BusName.isValid("a b")            // false
/// ```
public enum BusName {
    /// Whether `name` is 1 to 64 ASCII letters, digits, '.', '_' or '-'.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic && $0.isASCII || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }
    }
}
