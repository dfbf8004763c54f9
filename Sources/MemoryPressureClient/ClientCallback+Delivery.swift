import MemoryPressureWire

extension ClientCallback {
    /// Calls the delegate's method for the callback; the launch callbacks get `launchOptions`.
    func deliver(to delegate: any MemoryPressureClientDelegate, launchOptions: ClientLaunchOptions) {
        switch self {
        case .willFinishLaunching: delegate.willFinishLaunching(options: launchOptions)
        case .didFinishLaunching: delegate.didFinishLaunching(options: launchOptions)
        case .didBecomeActive: delegate.didBecomeActive()
        case .willResignActive: delegate.willResignActive()
        case .didEnterBackground: delegate.didEnterBackground()
        case .willEnterForeground: delegate.willEnterForeground()
        case .willTerminate: delegate.willTerminate()
        case .didReceiveMemoryWarning(let level): delegate.didReceiveMemoryWarning(level: level)
        case .launchOptions: break  // Kept by the client, for the launch callbacks.
        }
    }
}
