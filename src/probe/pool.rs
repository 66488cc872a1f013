//! A small bounded pool on scoped threads: the probes of one host run at once, so a scan costs
//! about its slowest probe, and a deadline bounds the whole scan.

use super::Observation;
use super::plan::HttpProbe;
use crate::net::http::{Client, FetchError};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Runs `work` on every item with at most `workers` threads; results keep the items' order.
pub fn run_all<T, R, F>(items: &[T], workers: usize, work: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let workers = workers.clamp(1, items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = work(item);
                    if let Ok(mut slots) = results.lock() {
                        slots[index] = Some(result);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// Sends every probe; one not started before the deadline is recorded as not sent.
pub fn run_http(
    client: &Client,
    probes: &[HttpProbe],
    workers: usize,
    deadline: Instant,
) -> BTreeMap<String, Observation> {
    let answers = run_all(probes, workers, |probe| {
        if Instant::now() >= deadline {
            return Err(FetchError::Transient(
                "not sent: the scan deadline was reached".into(),
            ));
        }
        let headers: Vec<(&str, &str)> = probe
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        client.request(&probe.method, &probe.path, &headers, probe.body.as_deref())
    });
    probes.iter().map(|p| p.key.clone()).zip(answers).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn results_keep_order_and_every_item_runs_once() {
        let items: Vec<u32> = (0..50).collect();
        let out = run_all(&items, 4, |i| i * 2);
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert!(run_all(&Vec::<u32>::new(), 4, |i| *i).is_empty());
    }

    #[test]
    fn work_runs_concurrently() {
        // Eight items that each wait until all eight have started: only a pool that really
        // runs them at once gets past the barrier (a sequential one would hang, and the
        // runner's timeout in .config/nextest.toml would end it).
        let barrier = std::sync::Barrier::new(8);
        let started = Instant::now();
        let items = [0u8; 8];
        run_all(&items, 8, |_| {
            barrier.wait();
        });
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
