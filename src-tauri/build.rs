//! Generates the Tauri context (config, capabilities, embedded UI) at build time.

fn main() {
    tauri_build::build()
}
