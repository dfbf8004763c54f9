#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Looks at `condition` every 10 ms until it holds or `limit` passes, on the calling thread, and
/// returns whether it held: for what another process does and announces to no one (a daemon's
/// launches, its children's deaths, its log files). The limit only ends a broken test.
public func poll(within limit: Duration = .seconds(60), until condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while try !condition() {
        guard ContinuousClock.now < deadline else { return false }
        usleep(10_000)
    }
    return true
}
