#if FUZZING
/// With `-sanitize=fuzzer`, libFuzzer drives the harness. SwiftPM links an executable target's entry point under
/// the name `<module>_main` (so that tests can link the module) and points `main` at it, so this defines that entry
/// point and hands the command line to libFuzzer's driver, which parses its flags (`-runs=`, `-seed=`, corpus
/// directories, …) exactly as its own `main` would.
@_cdecl("CodecFuzzer_main")
func codecFuzzerMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
    var argc = argc
    var argv = Optional(argv)
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in codecFuzzerTestOneInput(data, size) }
}

/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size))`, from the
/// libFuzzer runtime that `-sanitize=fuzzer` links.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
