fn main() -> std::process::ExitCode {
    mongo_seq::cli::run()
}
