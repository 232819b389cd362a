//! tmp
pub(crate) mod closest;
pub mod edit;
pub(crate) mod matcher;
pub(crate) mod reindent;
pub(crate) mod text;
