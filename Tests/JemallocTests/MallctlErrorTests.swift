import Jemalloc
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct MallctlErrorTests {
    @Test func unknownKeyIsATypedErrorNamingTheKey() {
        #expect {
            _ = try MallctlKey<Int>("stats.no_such_statistic").read()
        } throws: { error in
            guard let error = error as? JemallocError else { return false }
            return error.kind == .unknownKey && error.errno == ENOENT && error.key == "stats.no_such_statistic"
                && error.description.contains("stats.no_such_statistic")
        }
        #expect(throws: JemallocError.self) { try MallctlMIB<Int>(name: "no.such.key") }
    }

    @Test func wrongValueSizeIsInvalidValue() {
        #expect {
            _ = try MallctlKey<UInt32>("stats.allocated").read()
        } throws: { error in
            (error as? JemallocError)?.kind == .invalidValue
        }
    }

    @Test func readOnlyKeyRefusesWrites() {
        #expect {
            try MallctlKey.statsAllocated.write(1)
        } throws: { error in
            (error as? JemallocError)?.kind == .notPermitted
        }
    }

    @Test func missingStatisticsInABuildWithoutThemSayWhy() {
        let withoutStatistics = JemallocError(key: "stats.allocated", errno: ENOENT, statisticsEnabled: false)
        #expect(withoutStatistics.kind == .statisticsDisabled)
        #expect(withoutStatistics.description.contains("without statistics"))
        let withStatistics = JemallocError(key: "stats.allocated", errno: ENOENT, statisticsEnabled: true)
        #expect(withStatistics.kind == .unknownKey)
        let notAStatistic = JemallocError(key: "opt.nothing", errno: ENOENT, statisticsEnabled: false)
        #expect(notAStatistic.kind == .unknownKey)
    }

    @Test func eachKindIsDistinctAndKeepsItsMessage() {
        let kinds: [(JemallocError.Kind, String)] = [
            (.unknownKey, "no such key in this build of jemalloc"),
            (.statisticsDisabled, "jemalloc was built without statistics (config.stats is false)"),
            (.invalidValue, "invalid value or value size"),
            (.notPermitted, "operation not permitted"),
            (.unavailable, "temporarily unavailable"),
            (.outOfMemory, "out of memory"),
            (.other, "failed"),
        ]
        #expect(Set(kinds.map(\.0)).count == kinds.count)
        #expect(Set(kinds.map(\.0.description)).count == kinds.count)
        #expect(JemallocError.Kind.outOfMemory.description == "outOfMemory")
        for (kind, reason) in kinds {
            #expect(JemallocError(kind: kind, key: "arena.3.purge", errno: 0).description == "jemalloc arena.3.purge: \(reason)")
        }
        let withErrno = JemallocError(kind: .notPermitted, key: "stats.allocated", errno: EPERM)
        #expect(withErrno.description == "jemalloc stats.allocated: operation not permitted (errno \(EPERM): \(String(cString: strerror(EPERM))))")
        #expect(JemallocError(key: "k", errno: EINVAL, statisticsEnabled: true).kind == .invalidValue)
        #expect(JemallocError(key: "k", errno: EBUSY, statisticsEnabled: true).kind == .unavailable)
        #expect(JemallocError(key: "k", errno: ENOMEM, statisticsEnabled: true).kind == .outOfMemory)
        #expect(JemallocError(key: "k", errno: EIO, statisticsEnabled: true).kind == .other)
    }

    @Test func indexedMIBsNameTheArenaTheyPointAt() throws {
        let mib = try MallctlKey<Int>("stats.arenas.0.pactive").mib()
        let moved = mib.replacingIndex(at: 2, with: 7)
        #expect(moved.name == "stats.arenas.7.pactive")
        #expect(mib.name == "stats.arenas.0.pactive")
    }
}
