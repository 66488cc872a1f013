//! Output formats, one renderer each, all reading only the result documents. Every format
//! keeps the exit code's 0/1/2/3 meaning; the exit code is the worst state of all hosts.

pub mod agentlocal;
pub mod changes;
pub mod json;
pub mod junit;
pub mod metrics;
pub mod monitoring;
pub mod otlp;
pub mod perfdata;
pub mod sarif;
pub mod stream;
pub mod summary;

use crate::clock::Now;
use crate::report::{ScanResult, State};
crate::vocabulary::vocabulary! {
    /// Output formats of `--format`: the names are the option's choices.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Format {
        /// The default: the monitoring line, detail lines and performance data.
        Monitoring,
        Metrics = "metrics",
        Otlp = "otlp",
        AgentLocal = "agentlocal",
        Summary = "summary",
        Json = "json",
        Sarif = "sarif",
        Junit = "junit",
    }
}

crate::vocabulary::vocabulary! {
    /// How `--diff-format` renders the change report.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum DiffFormat {
        Text = "text",
        Markdown = "markdown",
        ChatBlocks = "chatblocks",
    }
}

/// The operator's thresholds the performance data and metrics carry (`--warning`,
/// `--critical`, `--update-warning`, `--eol-warning`, `--tls-min-days`, `--waiver-warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub warning: u8,
    pub critical: u8,
    pub update_warning: bool,
    pub eol_warning: Option<i64>,
    pub tls_min_days: i64,
    pub waiver_warning: Option<i64>,
}

/// What renderers need besides the results: thresholds for perfdata, the debug switch (the
/// monitoring format adds its details), the clock for time stamps.
pub struct Context {
    pub thresholds: Thresholds,
    pub debug: bool,
    pub now: Now,
}

pub fn render(format: Format, results: &[ScanResult], ctx: &Context) -> String {
    match format {
        Format::Monitoring => monitoring::render(results, ctx),
        Format::Json => json::render(results),
        Format::Sarif => sarif::render(results, ctx),
        Format::Junit => junit::document(results),
        Format::Metrics => metrics::render(results, ctx),
        Format::Otlp => otlp::render(results, ctx),
        Format::AgentLocal => agentlocal::render(results, ctx),
        Format::Summary => summary::render(results, ctx),
    }
}

/// Worst state of all hosts: CRITICAL > WARNING > UNKNOWN > OK.
pub fn overall_state(results: &[ScanResult]) -> State {
    Tally::of(results).worst()
}

/// `1 CRITICAL, 2 OK`: the non-zero counts, most urgent first.
pub fn state_counts(results: &[ScanResult]) -> String {
    Tally::of(results).counts()
}

/// How many hosts ended in each state: what a run's first line and its exit code need of the
/// whole fleet, kept as the results pass by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// CRITICAL, WARNING, UNKNOWN, OK.
    by_state: [usize; 4],
}

impl Tally {
    const ORDER: [State; 4] = [State::Critical, State::Warning, State::Unknown, State::Ok];

    pub fn of(results: &[ScanResult]) -> Tally {
        let mut tally = Tally::default();
        results.iter().for_each(|r| tally.add(r.state));
        tally
    }

    pub fn add(&mut self, state: State) {
        if let Some(at) = Tally::ORDER.iter().position(|s| *s == state) {
            self.by_state[at] += 1;
        }
    }

    pub fn hosts(&self) -> usize {
        self.by_state.iter().sum()
    }

    /// CRITICAL > WARNING > UNKNOWN > OK; OK for no host.
    pub fn worst(&self) -> State {
        Tally::ORDER
            .into_iter()
            .zip(self.by_state)
            .find(|(_, n)| *n > 0)
            .map_or(State::Ok, |(state, _)| state)
    }

    /// `1 CRITICAL, 2 OK`: the non-zero counts, most urgent first.
    pub fn counts(&self) -> String {
        Tally::ORDER
            .into_iter()
            .zip(self.by_state)
            .filter(|(_, n)| *n > 0)
            .map(|(state, n)| format!("{n} {}", state.label()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
