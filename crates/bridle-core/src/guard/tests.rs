//! The guard end to end.
#![allow(clippy::unwrap_used)]
