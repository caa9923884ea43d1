import HAL
import HALFakes
import Testing
@testable import hwprobe

@Suite struct SimulatedScenarioTests {
    @Test func optionsNameWhatGoesWrong() throws {
        let uri = try DeviceURI(parsing: "sim:?fault=error&at=warmingUp&code=3")
        guard case .sim(let options) = uri else { Issue.record("\(uri)"); return }
        let scenario = try SimulatedScenario(options: options)
        #expect(scenario.fault == .error(.sensorFault, in: .warmingUp, after: .milliseconds(300)))
        #expect(uri.description == "sim:?at=warmingUp&code=3&fault=error")
        #expect(try SimulatedScenario(options: ["fault": "disconnect"]).fault == .disconnect(in: .scanning, after: .milliseconds(300)))
        #expect(try SimulatedScenario(options: ["fault": "low-battery"]).fault == .lowBattery(percent: 12))
        #expect(try SimulatedScenario(options: ["backup": "damaged"]).backup == .damaged)
        #expect(try DeviceURI(parsing: "sim:") == .simulatedBench)
    }

    @Test func mistakesAreUsageErrorsThatSayWhatIsKnown() {
        for (options, words) in [(["fault": "meltdown"], "one of disconnect, error"), (["at": "lunch"], "no phase of a scan"),
                                 (["backup": "lost"], "one of complete, damaged"), (["colour": "red"], "unknown sim: option 'colour'"),
                                 (["fault": "error", "code": "x"], "no mirror error code")] {
            do {
                _ = try SimulatedScenario(options: options)
                Issue.record("accepted \(options)")
            } catch {
                #expect(error.kind == .usage)
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test func theDamagedBackupReallyContradictsItself() async throws {
        let bench = try SimulatedBench(clock: ManualClock()).configured(for: DeviceURI(parsing: "sim:?backup=damaged"))
        var collector = Flows.VB1CodeCollector()
        var outcomes: [String] = []
        for text in bench.backupCodes.batches.prefix(3).compactMap({ $0.first?.text }) {
            outcomes.append("\(collector.accept(text))")
        }
        #expect(outcomes.last?.hasPrefix("damaged") == true, "\(outcomes)")
    }
}

import Flows
