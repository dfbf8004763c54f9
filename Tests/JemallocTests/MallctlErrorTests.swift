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

    @Test func indexedMIBsNameTheArenaTheyPointAt() throws {
        let mib = try MallctlKey<Int>("stats.arenas.0.pactive").mib()
        let moved = mib.replacingIndex(at: 2, with: 7)
        #expect(moved.name == "stats.arenas.7.pactive")
        #expect(mib.name == "stats.arenas.0.pactive")
    }
}
