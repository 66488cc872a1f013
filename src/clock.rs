//! The clock is an input: the run reads it once and passes the instant down, so the
//! assessment stays pure and tests can pin "now" (`COS_NOW`). A server that runs on reads a
//! [`Clock`] instead (the system's, one started at `COS_NOW`, or a test's) whenever it needs
//! the time.

use jiff::Timestamp;

/// The instant a run treats as "now".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now(pub Timestamp);

impl Now {
    /// `COS_NOW` when the settings pin it, else the system clock now.
    pub fn pinned_or_system(pinned: Option<Timestamp>) -> Now {
        Now(pinned.unwrap_or_else(Timestamp::now))
    }

    /// The instant as printed in reports: RFC 3339, UTC, whole seconds.
    pub fn stamp(&self) -> String {
        self.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// The instant to the whole second, as documents keep it (and print it, as [`Now::stamp`]).
    pub fn whole_second(&self) -> Timestamp {
        Timestamp::from_second(self.0.as_second()).unwrap_or(self.0)
    }

    /// Today's civil date in UTC; release and support dates are UTC calendar dates.
    pub fn today(&self) -> jiff::civil::Date {
        self.0.to_zoned(jiff::tz::TimeZone::UTC).date()
    }
}

/// The time, in Unix seconds: the system clock, or a test's.
pub trait Clock: Send + Sync {
    fn now(&self) -> i64;

    /// The time in Unix milliseconds, which the limits count by (a limit counted in whole
    /// seconds would let a burst through between two of them).
    fn now_millis(&self) -> i64 {
        self.now() * 1000
    }
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        jiff::Timestamp::now().as_second()
    }

    fn now_millis(&self) -> i64 {
        jiff::Timestamp::now().as_millisecond()
    }
}

/// A clock that starts at a given time and runs on (`COS_NOW` for `web`): a test moves a
/// node into the future to see another node's leases end.
pub struct StartedClock {
    pub start: i64,
    pub at: std::time::Instant,
}

impl Clock for StartedClock {
    fn now(&self) -> i64 {
        self.start + self.at.elapsed().as_secs() as i64
    }

    fn now_millis(&self) -> i64 {
        self.start * 1000 + self.at.elapsed().as_millis() as i64
    }
}
