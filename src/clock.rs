//! The clock is an input: the run reads it once and passes the instant down, so the
//! assessment stays pure and tests can pin "now" (`COS_NOW`).

use jiff::Timestamp;

/// The instant a run treats as "now".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now(pub Timestamp);

impl Now {
    pub fn system() -> Now {
        Now(Timestamp::now())
    }

    /// The instant as printed in reports: RFC 3339, UTC, whole seconds.
    pub fn stamp(&self) -> String {
        self.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// Today's civil date in UTC; release and support dates are UTC calendar dates.
    pub fn today(&self) -> jiff::civil::Date {
        self.0.to_zoned(jiff::tz::TimeZone::UTC).date()
    }
}
