// `import MemoryPressure` brings the whole library: the modules below are its layers, bottom first
// (see the README's Layout). Each may be imported alone by code that needs only its layer.
@_exported import MemoryPressureRuntime
@_exported import MemoryPressureMeasurement
@_exported import MemoryPressureMonitor
@_exported import MemoryPressureCaches
@_exported import MemoryPressureLifecycle
@_exported import MemoryPressureProcesses
