// carkey-agent: the OpenCarKey daemon that runs on the car's gateway board.
//
// Subcommands live one per file under Commands/ as `extension Command { static let ... }`;
// add a new one there and list it in the table below.
import CommandLineKit
import Protocol

#if canImport(Glibc)
import Glibc
#endif

let agent = Tool(
    name: "carkey-agent",
    version: BuildInfo.version,
    summary: "car-side daemon of the OpenCarKey phone-as-car-key system",
    commands: [
        .demo,
        .run,
        .status,
        .pair,
        .keys,
        .events,
        .outbox,
        .stats,
        .checkpoint,
        .conformance,
        .backup,
        .restore,
        .vault,
        .sim,
    ]
)

exit(agent.main(CommandLine.arguments))
