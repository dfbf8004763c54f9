/// Allocation-free scanning of the small text files the kernel writes: lines of fields separated by
/// spaces, unsigned integers and fixed-point decimals. Works on any collection of bytes, so the
/// sampling path parses straight from a stack buffer and tests parse string literals' `utf8`.
package enum KernelText {
    /// Calls `body` with each non-empty line of `text` until it returns false. Returns whether every
    /// line was accepted.
    package static func allLines<Bytes: Collection<UInt8>>(
        of text: Bytes,
        _ body: (Bytes.SubSequence) -> Bool
    ) -> Bool {
        allPieces(of: text[...], separatedBy: UInt8(ascii: "\n"), body)
    }

    /// Calls `body` with each field of `line` (separated by runs of spaces) until it returns false.
    /// Returns whether every field was accepted.
    package static func allFields<Line: Collection<UInt8>>(
        of line: Line,
        _ body: (Line.SubSequence) -> Bool
    ) -> Bool where Line.SubSequence == Line {
        allPieces(of: line, separatedBy: UInt8(ascii: " "), body)
    }

    /// The value of the first `name value` line of `text` named `name` (a flat-keyed file such as
    /// `memory.stat`); nil when there is none or its value is not an unsigned integer.
    package static func value<Text: Collection<UInt8>>(named name: StaticString, in text: Text) -> UInt64? {
        var found: UInt64?
        _ = allLines(of: text) { line in
            guard let space = line.firstIndex(of: UInt8(ascii: " ")), matches(line[..<space], name) else { return true }
            found = unsigned(line[line.index(after: space)...])
            return false
        }
        return found
    }

    /// Splits `name=value` at its first `=`; nil when there is none.
    static func nameAndValue<Field: Collection<UInt8>>(
        _ field: Field
    ) -> (name: Field.SubSequence, value: Field.SubSequence)? {
        guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        return (field[..<equals], field[field.index(after: equals)...])
    }

    /// `text` without trailing spaces and newlines.
    static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ text: Bytes) -> Bytes.SubSequence {
        var end = text.endIndex
        while end > text.startIndex {
            let previous = text.index(before: end)
            guard text[previous] == UInt8(ascii: " ") || text[previous] == UInt8(ascii: "\n") else { break }
            end = previous
        }
        return text[..<end]
    }

    /// The value of a non-empty run of decimal digits; nil for anything else or on overflow.
    package static func unsigned(_ digits: some Collection<UInt8>) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard let digit = digitValue(byte) else { return nil }
            let (times10, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times10.addingReportingOverflow(digit)
            guard !overflowed, !carried else { return nil }
            value = sum
        }
        return value
    }

    /// The value of `digits[.digits]`, as PSI writes its averages (`1.50`); nil for anything else.
    package static func decimal<Text: Collection<UInt8>>(_ text: Text) -> Double? {
        guard let point = text.firstIndex(of: UInt8(ascii: ".")) else {
            return unsigned(text).map { Double($0) }
        }
        let fraction = text[text.index(after: point)...]
        guard fraction.count <= 18,
              let whole = unsigned(text[..<point]),
              let fractionValue = unsigned(fraction)
        else { return nil }
        var scale: UInt64 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        // One correctly rounded division of two exact integers gives the Double that the text names
        // (`1.57` is 157 / 100); adding a whole part to a rounded fraction could be off by one ulp.
        let (scaledWhole, overflow) = whole.multipliedReportingOverflow(by: scale)
        let (mantissa, carry) = scaledWhole.addingReportingOverflow(fractionValue)
        if !overflow, !carry, mantissa <= 1 << 53, scale <= 1 << 53 {
            return Double(mantissa) / Double(scale)
        }
        return Double(whole) + Double(fractionValue) / Double(scale)
    }

    /// Whether `bytes` spell `word`.
    package static func matches(_ bytes: some Collection<UInt8>, _ word: StaticString) -> Bool {
        word.withUTF8Buffer { bytes.elementsEqual($0) }
    }

    private static func digitValue(_ byte: UInt8) -> UInt64? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? UInt64(byte &- UInt8(ascii: "0")) : nil
    }

    private static func allPieces<Bytes: Collection<UInt8>>(
        of text: Bytes,
        separatedBy separator: UInt8,
        _ body: (Bytes.SubSequence) -> Bool
    ) -> Bool {
        var start = text.startIndex
        while start < text.endIndex {
            let end = text[start...].firstIndex(of: separator) ?? text.endIndex
            if start < end, !body(text[start..<end]) { return false }
            start = end < text.endIndex ? text.index(after: end) : end
        }
        return true
    }
}
