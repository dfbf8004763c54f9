import CJemalloc

/// Untyped access to jemalloc's `mallctl` namespace by name.
///
/// Prefer ``MallctlKey`` for reads and writes, and ``MallctlMIB`` for reads on a hot path; this
/// type is what both are built on, and what reaches keys this module has not typed.
public enum Mallctl {
    /// Reads the value of `name`.
    @inlinable
    public static func read<Value: MallctlValue>(
        _ name: String,
        as type: Value.Type = Value.self
    ) throws(JemallocError) -> Value {
        var value = Value()
        var size = MemoryLayout<Value>.size
        let status = mallctl(name, &value, &size, nil, 0)
        try check(status, key: name)
        return value
    }

    /// Writes `value` to `name`.
    @inlinable
    public static func write<Value: MallctlValue>(_ name: String, _ value: Value) throws(JemallocError) {
        var value = value
        let status = mallctl(name, nil, nil, &value, MemoryLayout<Value>.size)
        try check(status, key: name)
    }

    /// Runs the command `name`, a key that takes and returns nothing (`arena.<i>.purge`,
    /// `arena.<i>.destroy`, `thread.tcache.flush`).
    ///
    /// Commands on arenas (`arena.*`) run one at a time, process-wide, so that an all-arenas purge
    /// never races the destruction of an arena.
    public static func perform(_ name: String) throws(JemallocError) {
        guard name.hasPrefix("arena.") else {
            return try check(mallctl(name, nil, nil, nil, 0), key: name)
        }
        try ArenaMaintenance.serialize { () throws(JemallocError) in
            try check(mallctl(name, nil, nil, nil, 0), key: name)
        }
    }

    /// Reads a `const char *` key, such as `version`.
    public static func readString(_ name: String) throws(JemallocError) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        try check(mallctl(name, &pointer, &size, nil, 0), key: name)
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// Whether this jemalloc was built with statistics (`config.stats`).
    public static var statisticsEnabled: Bool {
        (try? MallctlKey.statisticsEnabled.read()) ?? false
    }

    @usableFromInline
    static func check(_ status: Int32, key: @autoclosure () -> String) throws(JemallocError) {
        guard status == 0 else {
            throw JemallocError(key: key(), errno: status, statisticsEnabled: statisticsEnabled)
        }
    }
}
