#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The calling thread's stock of bytes charged to one ``FootprintAccount`` ahead of use, so that
/// small heap allocations and frees are admitted without touching the account's shared counter, as
/// the kernel's memory cgroups keep a per-CPU stock of charged pages.
///
/// The stock's bytes are counted in the account as admitted, so the account's footprint is never
/// lower than what the heaps hold: between two refills it is higher by at most the stocks the
/// threads hold (``FootprintAccount/stockBatch`` to twice that each). The stock holds its account
/// (a retained reference) until the thread moves to another account or exits, when the bytes go
/// back.
@usableFromInline
struct ChargeStock {
    /// The account the bytes are charged to; nil when the stock is empty.
    @usableFromInline package private(set) var account: Unmanaged<FootprintAccount>?
    /// Bytes charged to `account` and not yet used.
    @usableFromInline package var bytes: Int

    /// The calling thread's stock under `key` (``key``, which an account copies so that the
    /// allocation path reads no lazily made global), made on first use and emptied when the
    /// thread exits.
    @inlinable
    package static func current(_ key: pthread_key_t) -> UnsafeMutablePointer<ChargeStock> {
        pthread_getspecific(key)?.assumingMemoryBound(to: ChargeStock.self) ?? make()
    }

    /// Whether the stock is charged to `account`.
    @inlinable
    func isCharged(to account: FootprintAccount) -> Bool {
        self.account?.toOpaque() == Unmanaged.passUnretained(account).toOpaque()
    }

    /// Holds `bytes`, just charged to `account`, after giving back what the stock held.
    mutating func refill(_ bytes: Int, chargedTo account: FootprintAccount) {
        drain()
        self.account = .passRetained(account)
        self.bytes = bytes
    }

    /// Gives the stock's bytes back to its account and lets go of it.
    package mutating func drain() {
        guard let account else { return }
        account.takeUnretainedValue().giveBack(bytes)
        account.release()
        self.account = nil
        bytes = 0
    }

    /// The thread-specific key of the threads' stocks.
    package static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { stock in
            guard let stock else { return }
            let typed = stock.assumingMemoryBound(to: ChargeStock.self)
            typed.pointee.drain()
            typed.deinitialize(count: 1)
            typed.deallocate()
        }
        precondition(status == 0, "pthread_key_create failed: errno \(status)")
        return key
    }()

    @inline(never) @usableFromInline
    static func make() -> UnsafeMutablePointer<ChargeStock> {
        let stock = UnsafeMutablePointer<ChargeStock>.allocate(capacity: 1)
        stock.initialize(to: ChargeStock(account: nil, bytes: 0))
        pthread_setspecific(key, stock)
        return stock
    }
}
