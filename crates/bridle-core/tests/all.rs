//! Integration tests of bridle-core: the engine driven against scripted model servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
