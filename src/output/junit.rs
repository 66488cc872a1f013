//! (Being written: see the issue note.)

use super::Context;
use crate::report::ScanResult;

pub fn render(_results: &[ScanResult], _ctx: &Context) -> String {
    String::from("UNKNOWN: this output format is being written\n")
}
