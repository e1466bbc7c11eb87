import ArgumentParser
import FluxBus

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub (public).",
        discussion: """
            Give the coordinator its own pair (--curve-secret-key coordinator.key) and every worker and client \
            theirs. List each peer's public key in the coordinator's authorized keys file, one line each: \
            PUBLIC-KEY NAME ROLE, where ROLE is worker, client or admin; a worker's NAME is its --id. Existing \
            files are never overwritten.

            Examples:
              fluxbus keygen coordinator --out /etc/fluxbus/keys
              fluxbus keygen w1 && echo "$(tail -1 w1.pub) w1 worker" >> authorized_keys
            """)

    @Argument(help: "The key's name: the worker id or client name it is for.")
    var name: String

    @Option(help: ArgumentHelp("Where to write the files.", valueName: "dir"))
    var out = "."

    func run() throws {
        do {
            let (secret, publicKey) = try CurveKeyFiles.generate(name: name, directory: out)
            print("wrote \(secret) (secret, 0600) and \(publicKey) (public)")
        } catch {
            throw reportFailure(error)
        }
    }
}
