//! The Bridle desktop app's entry point; everything happens in the library.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    bridle_core::clock::launch_began();
    bridle_app::memory::fewer_arenas();
    bridle_core::wiring::protect_this_process();
    match bridle_app::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bridle-app: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
