import MemoryPressure

private let mebibyte = 1 << 20

extension Scenario {
    /// The scenario `mempressure` runs when given none: a day's mix of everything, about 20 seconds
    /// on a 768 MiB device with eight apps. Without the manager its apps hold well over the budget.
    package static let standard = Scenario(
        name: "default",
        summary: "A day's mix: eight apps, random switching, calls, background fetches and memory spikes.",
        budgetBytes: 768 * mebibyte, duration: .seconds(20), seed: 1,
        apps: apps([
            ("photos", .photos), ("music", .music), ("maps", .maps), ("browser", .browser),
            ("notes", .utility), ("camera", .photos), ("podcasts", .music), ("news", .browser),
        ]),
        randomActivity: RandomActivity(
            meanGap: .milliseconds(1000),
            weights: .init(open: 6, home: 0.5, interruption: 1, backgroundLaunch: 1.5, spike: 1),
            interruptionLength: .milliseconds(300) ... .milliseconds(1500),
            backgroundWork: .milliseconds(500) ... .seconds(3),
            spikeBytes: 48 * mebibyte ... 128 * mebibyte,
            spikeHold: .milliseconds(300) ... .milliseconds(1500)
        )
    )

    /// Every built-in scenario, the default first.
    package static let builtIn: [Scenario] = [
        standard,
        Scenario(
            name: "switching",
            summary: "A restless user: ten apps, a switch every half second, nothing else.",
            budgetBytes: 768 * mebibyte, duration: .seconds(20), seed: 1,
            apps: apps([
                ("photos", .photos), ("music", .music), ("maps", .maps), ("browser", .browser), ("notes", .utility),
                ("camera", .photos), ("podcasts", .music), ("news", .browser), ("transit", .maps), ("calculator", .utility),
            ]),
            randomActivity: RandomActivity(
                meanGap: .milliseconds(500),
                weights: .init(open: 1, home: 0, interruption: 0, backgroundLaunch: 0, spike: 0),
                interruptionLength: .milliseconds(500) ... .milliseconds(500), backgroundWork: .seconds(1) ... .seconds(1),
                spikeBytes: mebibyte ... mebibyte, spikeHold: .seconds(1) ... .seconds(1)
            )
        ),
        Scenario(
            name: "spikes",
            summary: "Heavy editing: five apps and frequent large spikes in the foreground app.",
            budgetBytes: 768 * mebibyte, duration: .seconds(20), seed: 1,
            apps: apps([("photos", .photos), ("maps", .maps), ("browser", .browser), ("music", .music), ("notes", .utility)]),
            randomActivity: RandomActivity(
                meanGap: .milliseconds(900),
                weights: .init(open: 2, home: 0, interruption: 0, backgroundLaunch: 0, spike: 3),
                interruptionLength: .milliseconds(500) ... .milliseconds(500), backgroundWork: .seconds(1) ... .seconds(1),
                spikeBytes: 64 * mebibyte ... 160 * mebibyte, spikeHold: .milliseconds(300) ... .seconds(1)
            )
        ),
        Scenario(
            name: "background",
            summary: "A busy background: fetches launch apps behind the user's back while music plays on.",
            budgetBytes: 768 * mebibyte, duration: .seconds(20), seed: 1,
            apps: apps([
                ("music", .music), ("photos", .photos), ("maps", .maps), ("browser", .browser),
                ("podcasts", .music), ("news", .browser), ("mail", .utility), ("camera", .photos),
            ]),
            randomActivity: RandomActivity(
                meanGap: .milliseconds(800),
                weights: .init(open: 3, home: 1, interruption: 0.5, backgroundLaunch: 4, spike: 0),
                interruptionLength: .milliseconds(300) ... .seconds(1), backgroundWork: .seconds(1) ... .seconds(4),
                spikeBytes: mebibyte ... mebibyte, spikeHold: .seconds(1) ... .seconds(1)
            )
        ),
        Scenario(
            name: "quick",
            summary: "A six-second smoke test: four apps on a 512 MiB device.",
            budgetBytes: 512 * mebibyte, duration: .seconds(6), seed: 1,
            apps: apps([("photos", .photos), ("maps", .maps), ("music", .music), ("notes", .utility)]),
            randomActivity: RandomActivity(
                meanGap: .milliseconds(600),
                weights: .init(open: 5, home: 0, interruption: 1, backgroundLaunch: 1, spike: 1),
                interruptionLength: .milliseconds(200) ... .milliseconds(600), backgroundWork: .milliseconds(300) ... .seconds(1),
                spikeBytes: 32 * mebibyte ... 64 * mebibyte, spikeHold: .milliseconds(200) ... .milliseconds(600)
            )
        ),
        stampede,
    ]

    /// Ten apps launch at once at the start, eight of them into the background, most of them games
    /// that load 320 MiB each as fast as they can: about 2.7 GiB asked for in a second under a 768 MiB
    /// budget. Then a restless user relaunches what the system terminated, while events launch more
    /// into the background. Without the manager the footprint goes to about four times the budget;
    /// with it, heap admission holds the launches to the budget while the ladder terminates.
    package static let stampede: Scenario = {
        let installed = apps([
            ("photos", .photos), ("arcade", .game), ("racer", .game), ("puzzle", .game), ("strategy", .game),
            ("shooter", .game), ("quest", .game), ("chess", .game), ("cards", .game), ("maps", .maps),
        ])
        // The first app is opened at the start; eight launch into the background with it, and the
        // user opens the second while they load.
        let launches = installed[2...].enumerated().map { index, app in
            ScenarioEvent(time: .zero, action: .backgroundLaunch(app.name, work: .milliseconds(500 + 200 * index)))
        }
        return Scenario(
            name: "stampede",
            summary: "Ten apps launch at once, eight into the background, most loading 320 MiB: four times the budget.",
            budgetBytes: 768 * mebibyte, duration: .seconds(10), seed: 1,
            apps: installed,
            randomActivity: RandomActivity(
                meanGap: .milliseconds(800),
                weights: .init(open: 3, home: 0.5, interruption: 0.5, backgroundLaunch: 3, spike: 1),
                interruptionLength: .milliseconds(200) ... .milliseconds(800), backgroundWork: .milliseconds(500) ... .seconds(2),
                spikeBytes: 32 * mebibyte ... 96 * mebibyte, spikeHold: .milliseconds(300) ... .seconds(1)
            ),
            events: launches + [ScenarioEvent(time: .milliseconds(100), action: .open(installed[1].name))]
        )
    }()

    /// The built-in scenario named `name`.
    package static func builtIn(named name: String) -> Scenario? {
        builtIn.first { $0.name == name }
    }

    private static func apps(_ list: [(String, AppProfile)]) -> [ScenarioApp] {
        list.map { name, profile in
            do {
                return ScenarioApp(name: try AppIdentifier(name), profile: profile)
            } catch {
                preconditionFailure("built-in app name \(name): \(error)")
            }
        }
    }
}
