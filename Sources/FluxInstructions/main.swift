import FluxBusTools
import Foundation

// flux-instructions SCENARIO COUNT [floor|durable|durable-off]: runs an in-process workload COUNT times, synchronously, and exits.
//
// For callgrind, which counts instructions where timings on a shared VM swing 2×: `scripts/instruction-counts.sh`
// runs it with COUNT 0 and COUNT N, for the workload and its floor, and divides. It has a synchronous main on
// purpose: valgrind (3.19 and 3.24) crashes in libdispatch's signal thread, which an async main (dispatch_main)
// turns the main thread into.
let arguments = CommandLine.arguments.dropFirst()
if let scenario = arguments.first.flatMap(BusWorkload.Scenario.init(rawValue:)),
    let count = arguments.dropFirst().first.flatMap({ Int($0) }), count >= 0
{
    // The bus's threads run while the main thread waits here, not in dispatch_main, where valgrind crashes.
    let done = DispatchSemaphore(value: 0)
    let failure = Failure()
    Task.detached {
        do {
            let log = arguments.dropFirst(2).first
            try await BusWorkload.run(count, durable: log == "durable" || log == "durable-off", syncOff: log == "durable-off", scenario: scenario)
        } catch {
            failure.text = "\(error)"
        }
        done.signal()
    }
    done.wait()
    if let text = failure.text {
        print("flux-instructions: \(text)")
        exit(1)
    }
    exit(0)
}
guard arguments.count >= 2, let workload = InProcessBenchmarks.workload(String(arguments.first!)),
    let count = Int(arguments.dropFirst().first!), count >= 0
else {
    print("usage: flux-instructions dispatcher|redux COUNT [floor] | bus|batch|status|flight|catch-up COUNT [durable|durable-off]")
    exit(2)
}
let floor = arguments.dropFirst(2).first == "floor"
do {
    try (floor ? workload.floor : workload.run)(count)
} catch {
    print("flux-instructions: \(error)")
    exit(1)
}
if count > 0, !workload.didWork() {
    print("flux-instructions: the workload did no work")
    exit(1)
}

/// Where the bus workload's task leaves its error for the main thread, which reads it after the semaphore.
final class Failure: @unchecked Sendable {
    var text: String?
}
