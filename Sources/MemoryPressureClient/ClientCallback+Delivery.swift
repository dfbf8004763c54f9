import MemoryPressureWire

extension ClientCallback {
    /// Calls the delegate's method for the callback.
    func deliver(to delegate: any MemoryPressureClientDelegate) {
        switch self {
        case .willFinishLaunching: delegate.willFinishLaunching()
        case .didFinishLaunching: delegate.didFinishLaunching()
        case .didBecomeActive: delegate.didBecomeActive()
        case .willResignActive: delegate.willResignActive()
        case .didEnterBackground: delegate.didEnterBackground()
        case .willEnterForeground: delegate.willEnterForeground()
        case .willTerminate: delegate.willTerminate()
        case .didReceiveMemoryWarning(let level): delegate.didReceiveMemoryWarning(level: level)
        }
    }
}
