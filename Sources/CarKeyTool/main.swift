// carkey: command-line tool for owners, fleet back ends and field engineers.
//
// Subcommands live one per file under Commands/ as `extension Command { static let ... }`
// (a group such as `crypto verify` is `Command(name: "crypto", summary: ..., subcommands: [...])`);
// add a new one there and list it in the table below.
import CommandLineKit
import Protocol

#if canImport(Glibc)
import Glibc
#endif

let tool = Tool(
    name: "carkey",
    version: BuildInfo.version,
    summary: "OpenCarKey command-line tool",
    commands: [
        .keygen,
        .crypto,
        .decode,
        .phone,
        .share,
        .revoke,
        .config,
        .command,
        .service,
        .audit,
    ]
)

exit(tool.main(CommandLine.arguments))
