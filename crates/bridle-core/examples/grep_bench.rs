//! `grep_bench ROOT PATTERN [-i] [--glob G]`: grep_search over a whole tree with no result
//! limit, printing the number of matching lines, for a side-by-side run with ripgrep
//! (scripts/bench.sh). The search is the tool's own code; only the limits are lifted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use bridle_core::tools::search::{grep_search, GrepOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().expect("ROOT")).canonicalize().expect("ROOT exists");
    let mut opts = GrepOptions::new(args.next().expect("PATTERN"));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-i" => opts.case_insensitive = true,
            "--glob" => opts.glob = args.next(),
            other => panic!("unknown argument {other}"),
        }
    }
    opts.max_results = usize::MAX;
    opts.max_file_size = u64::MAX;
    let hits = grep_search(&root, &root, &opts).expect("search");
    println!("{} matching lines in {} files", hits.total_matches, hits.files_matched);
}
