//! Integration tests of the `bridle` binary: real processes, a real aimock server, real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
