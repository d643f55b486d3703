fn main() -> std::process::ExitCode {
    mongo_seq_sidecar::allocator::one_arena();
    mongo_seq_sidecar::cli::run()
}
