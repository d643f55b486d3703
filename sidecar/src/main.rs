fn main() -> std::process::ExitCode {
    mongo_seq::allocator::one_arena();
    mongo_seq::cli::run()
}
