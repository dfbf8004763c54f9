extension Duration {
    /// The duration for people, in milliseconds below a second (`3.2 ms`, `0.4 ms`) and in seconds
    /// above (`2.5 s`): what the records' descriptions print.
    package var readable: String {
        let (seconds, attoseconds) = components
        let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        if abs(milliseconds) >= 1_000 {
            return "\((milliseconds / 10).rounded() / 100) s"
        }
        return "\((milliseconds * 10).rounded() / 10) ms"
    }
}
