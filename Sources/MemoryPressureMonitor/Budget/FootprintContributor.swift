import MemoryPressureRuntime
/// Memory that counts in the footprint but that neither the process's own figures nor the heaps
/// show: a process app's child, whose pages belong to another process.
///
/// The monitor adds ``totalFootprintBytes(reading:)`` to every sample, and the purge registry adds
/// ``footprintBytes(of:)`` to its app's footprint; what contributes (the process apps) plugs in
/// from above, so nothing here knows it exists.
package protocol FootprintContributor: AnyObject, Sendable {
    /// `identifier`'s own contribution; 0 when it has none.
    func footprintBytes(of identifier: AppIdentifier) -> Int

    /// Everything contributed, with what `reading` says read again and the rest as last read; nil
    /// when there is nothing to add.
    func totalFootprintBytes(reading: ContributionReading) -> Int?
}
