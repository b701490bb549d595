// carkey-bench: benchmarks for `make bench`, one JSON object per line on stdout.
// Every figure is a ratio against a reference measured in the same run (direct OpenSSL in C,
// raw fdatasync, mosquitto_pub), never an absolute time compared with a constant.
#if canImport(Glibc)
import Glibc
#endif

do {
    try ECDSAVerifyBench.run()
    try OutboxBench.run()
} catch {
    let line = Array("carkey-bench: \(error)\n".utf8)
    _ = write(2, line, line.count)
    exit(1)
}
