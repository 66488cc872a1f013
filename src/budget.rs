//! The run's time budget (`--time-budget`) and retrying within it. A monitoring core kills a
//! check after its own timeout (60 s in Nagios and Icinga) and shows nothing useful; the run
//! must end before that, UNKNOWN and naming what was slow. So no attempt starts that could not
//! end within the budget, and every limit below it (each connect, TLS handshake, request, DNS
//! lookup and webhook attempt: [`StepTimeout`]; the scan deadline) is cut to what is left when
//! it starts.

use std::time::{Duration, Instant};

/// The end of the run's time budget.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub deadline: Instant,
    pub total: Duration,
}

/// The time limit of each blocking step of a scan (a connect, a TLS handshake, a request with
/// its headers and body, a DNS lookup): its own timeout (`--timeout`), cut to what is left of
/// the budget when the step starts. Steps run one after another (the TLS inspection, then a
/// request over plain HTTP; a connect, then the request), so a limit fixed when the attempt
/// began would let each take all of it and the run outlive its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepTimeout {
    /// The limit of one step.
    pub each: Duration,
    /// No step reaches past this (the budget's end); `None` outside a budgeted run.
    pub end: Option<Instant>,
}

impl StepTimeout {
    /// What a step starting now may take: its limit, or what is left of the budget when that
    /// is less. At least a millisecond, so that past the budget a step fails at once, as timed
    /// out, instead of having no limit (socket APIs take zero for "none").
    pub fn now(&self) -> Duration {
        let left = self.end.map_or(self.each, |end| {
            end.saturating_duration_since(Instant::now())
        });
        self.each.min(left).max(Duration::from_millis(1))
    }

    /// Another limit per step, within the same budget.
    pub fn with_each(self, each: Duration) -> StepTimeout {
        StepTimeout { each, ..self }
    }

    /// When a step starting now must be done.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.now()
    }

    /// The budget is spent: a step starting now would fail at once.
    pub fn is_spent(&self) -> bool {
        self.end.is_some_and(|end| Instant::now() >= end)
    }
}

/// `each` for every step, whenever it starts.
impl From<Duration> for StepTimeout {
    fn from(each: Duration) -> StepTimeout {
        StepTimeout { each, end: None }
    }
}

/// One attempt's outcome.
pub enum Attempt<T, E> {
    Done(T),
    /// Retrying will not help (the operator's mistake, a definite answer).
    Failed(E),
    /// A transient failure (timeout, reset, 5xx): worth another attempt, with why.
    Transient(String),
}

/// Why retrying ended without a result.
pub enum GaveUp<E> {
    Failed(E),
    /// Every allowed attempt failed, or the budget left no room for another: the message says
    /// what was slow and how many attempts ran.
    Exhausted {
        message: String,
        attempts: u32,
    },
}

impl Budget {
    pub fn new(started: Instant, total: Duration) -> Budget {
        Budget {
            deadline: started + total,
            total,
        }
    }

    /// A budget that does not run out (a century): for work outside a budgeted run.
    pub fn unlimited() -> Budget {
        Budget::new(Instant::now(), Duration::from_secs(100 * 365 * 24 * 3600))
    }

    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// `each` as the limit of every blocking step to come, each cut to what is left of the
    /// budget when it starts.
    pub fn step_timeout(&self, each: Duration) -> StepTimeout {
        StepTimeout {
            each,
            end: Some(self.deadline),
        }
    }

    /// A deadline `after` from now, never past the budget.
    pub fn deadline_in(&self, after: Duration) -> Instant {
        (Instant::now() + after).min(self.deadline)
    }

    /// Runs `attempt` (numbered from 1) once plus up to `retries` retries, waiting
    /// `backoff_factor * 2^n` seconds before retry n. A retry starts only when the wait plus
    /// the last attempt's duration (the next one fails the same way, as slowly) fits in what
    /// is left of the budget; an attempt never starts once the budget is spent.
    pub fn retry<T, E>(
        &self,
        retries: u32,
        backoff_factor: f64,
        mut attempt: impl FnMut(u32) -> Attempt<T, E>,
    ) -> Result<T, GaveUp<E>> {
        let attempts = retries.saturating_add(1);
        let budget = self.total.as_secs_f64();
        let mut last_failure = String::new();
        let mut last_duration = Duration::ZERO;
        for n in 1..=attempts {
            if n > 1 {
                let wait = backoff(backoff_factor, n - 1);
                if wait + last_duration > self.left() {
                    return Err(GaveUp::Exhausted {
                        message: format!(
                            "{last_failure} (stopped after {} of {attempts} attempt(s): another \
                             would not end within the {budget} s time budget, --time-budget)",
                            n - 1
                        ),
                        attempts: n - 1,
                    });
                }
                crate::diagnostics::debug_log(&format!(
                    "retry {} in {:.2} s after: {last_failure}",
                    n - 1,
                    wait.as_secs_f64()
                ));
                std::thread::sleep(wait);
            }
            if self.left().is_zero() {
                return Err(GaveUp::Exhausted {
                    message: format!(
                        "the {budget} s time budget (--time-budget) was spent before its turn; \
                         raise --concurrency or the budget"
                    ),
                    attempts: n - 1,
                });
            }
            let started = Instant::now();
            match attempt(n) {
                Attempt::Done(value) => return Ok(value),
                Attempt::Failed(e) => return Err(GaveUp::Failed(e)),
                Attempt::Transient(message) => {
                    last_failure = message;
                    last_duration = started.elapsed();
                }
            }
        }
        Err(GaveUp::Exhausted {
            message: format!("{last_failure} (gave up after {attempts} attempt(s))"),
            attempts,
        })
    }
}

/// The wait before retry `n` (1, 2, ...): `factor * 2^n` seconds, as `--backoff-factor`
/// documents. Scans, remediation checks and webhook deliveries all retry with it.
pub fn backoff(factor: f64, n: u32) -> Duration {
    let seconds = factor * 2f64.powi(n.min(30) as i32);
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(r: Result<u32, GaveUp<String>>) -> String {
        match r {
            Ok(v) => format!("ok {v}"),
            Err(GaveUp::Failed(e)) => format!("failed {e}"),
            Err(GaveUp::Exhausted { message, attempts }) => format!("{attempts}: {message}"),
        }
    }

    #[test]
    fn transient_failures_are_retried_and_counted() {
        let budget = Budget::new(Instant::now(), Duration::from_secs(60));
        let mut calls = 0;
        let r = budget.retry(2, 0.0, |n| {
            calls += 1;
            if n < 3 {
                Attempt::Transient(format!("timed out {n}"))
            } else {
                Attempt::Done(n)
            }
        });
        assert_eq!((outcome(r), calls), ("ok 3".to_string(), 3));
        let r = budget.retry(1, 0.0, |n| {
            Attempt::<u32, String>::Transient(format!("reset {n}"))
        });
        assert_eq!(outcome(r), "2: reset 2 (gave up after 2 attempt(s))");
        let r = budget.retry(5, 0.0, |_| Attempt::<u32, String>::Failed("refused".into()));
        assert_eq!(outcome(r), "failed refused");
    }

    #[test]
    fn no_retry_starts_that_could_not_end_within_the_budget() {
        // The budget ran out during the first attempt: no second one, whatever the retries.
        let budget = Budget::new(Instant::now(), Duration::from_millis(30));
        let r = budget.retry(10, 0.0, |_| {
            std::thread::sleep(Duration::from_millis(40));
            Attempt::<u32, String>::Transient("timed out".into())
        });
        assert_eq!(
            outcome(r),
            "1: timed out (stopped after 1 of 11 attempt(s): another would not end within the \
             0.03 s time budget, --time-budget)"
        );
        // Spent before the first attempt: none runs.
        let spent = Budget::new(
            Instant::now() - Duration::from_secs(2),
            Duration::from_secs(1),
        );
        let r = spent.retry(2, 0.0, |_| Attempt::<u32, String>::Done(1));
        assert!(outcome(r).starts_with("0: the 1 s time budget"));
        assert_eq!(
            spent.step_timeout(Duration::from_secs(10)).now(),
            Duration::from_millis(1)
        );
    }

    #[test]
    fn a_step_gets_its_timeout_or_what_is_left_of_the_budget_when_it_starts() {
        let budget = Budget::new(Instant::now(), Duration::from_secs(60));
        let step = budget.step_timeout(Duration::from_secs(10));
        assert_eq!(step.now(), Duration::from_secs(10));
        assert!(!step.is_spent());
        // Late in the budget a step gets what is left, however long its own timeout.
        let late = Budget::new(
            Instant::now() - Duration::from_secs(59),
            Duration::from_secs(60),
        )
        .step_timeout(Duration::from_secs(10));
        assert!(late.now() <= Duration::from_secs(1), "{:?}", late.now());
        assert!(late.deadline() <= Instant::now() + Duration::from_secs(1));
        // Spent: a millisecond, never "no limit".
        let spent = Budget::new(
            Instant::now() - Duration::from_secs(2),
            Duration::from_secs(1),
        )
        .step_timeout(Duration::from_secs(10));
        assert!(spent.is_spent());
        assert_eq!(spent.now(), Duration::from_millis(1));
        // Without a budget the step keeps its own timeout.
        let free = StepTimeout::from(Duration::from_secs(3));
        assert_eq!(
            (free.now(), free.is_spent()),
            (Duration::from_secs(3), false)
        );
    }
}
