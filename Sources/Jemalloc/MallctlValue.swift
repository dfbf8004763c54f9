/// A value that mallctl reads or writes by plain copy: the C types behind jemalloc's keys.
///
/// `size_t` and `ssize_t` keys map to `Int`, `unsigned` to `UInt32`, `uint64_t` to `UInt64`,
/// `bool` to `Bool`.
public protocol MallctlValue: BitwiseCopyable, Sendable {
    /// The zero value, which a read overwrites.
    init()
}

extension Int: MallctlValue {}
extension UInt: MallctlValue {}
extension UInt32: MallctlValue {}
extension UInt64: MallctlValue {}
extension Bool: MallctlValue {}
