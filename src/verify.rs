//! `--verify-remediation`: run only the probes that measure the named finding ids and report
//! whether they pass now. (Being written.)
