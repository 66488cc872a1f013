//! Output formats, one renderer each, all reading only the result documents.

pub mod monitoring;
pub mod perfdata;
