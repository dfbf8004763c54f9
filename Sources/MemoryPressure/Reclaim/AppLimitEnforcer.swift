/// Holds each app to its own limits on every sample: a warning once per crossing of the soft limit,
/// termination (reason `perAppLimit`) over the hard limit.
struct AppLimitEnforcer {
    /// Apps warned for their soft limit and not yet back under it.
    private var warned: Set<AppIdentifier> = []

    mutating func enforce(in system: MemorySystem, level: PressureLevel, sample: MemorySample) async {
        for hosted in system.ledger.withLock({ Array($0.apps.values) }) {
            let app = hosted.app
            guard let limit = hosted.limits.limit(in: app.state), limit != .none else { continue }
            let footprint = system.footprint(of: app.identifier).totalBytes
            if let hard = limit.hardBytes, footprint > hard {
                warned.remove(app.identifier)
                _ = await system.terminate(app, reason: .perAppLimit, step: .hardLimit)
            } else if let soft = limit.softBytes, footprint > soft {
                guard warned.insert(app.identifier).inserted else { continue }
                system.logger.notice("app over its soft memory limit", metadata: [
                    "app": "\(app.identifier)", "footprint": "\(footprint)", "limit": "\(soft)",
                    "state": "\(app.state)",
                ])
                let warning = MemoryWarning(level: max(level, .warning), sample: sample)
                let delivery = await warning.deliver(to: [app], timeout: system.configuration.warningTimeout) { _ in footprint }
                system.emit(.warning(delivery, step: .softLimit))
            } else {
                warned.remove(app.identifier)
            }
        }
    }
}
