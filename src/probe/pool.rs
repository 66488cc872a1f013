//! A small bounded pool on scoped threads: the probes of one host run at once, so a scan costs
//! about its slowest probe, and a deadline bounds the whole scan. HTTP probes run on as many
//! threads as the client has connections to spend, so each thread keeps one connection busy.

use super::Observation;
use super::plan::HttpProbe;
use crate::net::http::{Client, FetchError};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Runs `work` on every item with at most `workers` threads; results keep the items' order.
pub fn run_all<T, R, F>(items: &[T], workers: usize, work: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let indexed: Vec<(usize, &T)> = items.iter().enumerate().collect();
    let workers = workers.clamp(1, items.len().max(1));
    let mut done = run_queue(indexed, workers, |(_, item)| work(item), |_, _| Vec::new());
    done.sort_by_key(|((index, _), _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

/// Sends every probe on at most `workers` threads; one not started before the deadline is
/// recorded as not sent.
pub fn run_http(
    client: &Client,
    probes: &[HttpProbe],
    workers: usize,
    deadline: Instant,
) -> BTreeMap<String, Observation> {
    run_http_then(client, probes.to_vec(), workers, deadline, &|_, _| {
        Vec::new()
    })
}

/// Derives more probes from one probe's answer.
pub type FollowUp<'a> = dyn Fn(&HttpProbe, &Observation) -> Vec<HttpProbe> + Sync + 'a;

/// Sends every probe on at most `workers` threads, in order, and the probes `follow_up`
/// derives from an answer as soon as that answer is in (see [`run_queue`]). One not started
/// before the deadline is recorded as not sent.
pub fn run_http_then(
    client: &Client,
    probes: Vec<HttpProbe>,
    workers: usize,
    deadline: Instant,
    follow_up: &FollowUp,
) -> BTreeMap<String, Observation> {
    run_queue(
        probes,
        workers,
        |probe| send(client, probe, deadline),
        follow_up,
    )
    .into_iter()
    .map(|(probe, answer)| (probe.key, answer))
    .collect()
}

/// Runs `work` on every item with at most `workers` threads, in order, and on the items
/// `follow_up` derives from a result as soon as that result is in. Those go ahead of the
/// items still waiting: an item that depends on another starts as early as it can and runs
/// beside the rest, instead of after a whole round. Results come in the order they finished.
pub fn run_queue<T, R, W, F>(items: Vec<T>, workers: usize, work: W, follow_up: F) -> Vec<(T, R)>
where
    T: Send,
    R: Send,
    W: Fn(&T) -> R + Sync,
    F: Fn(&T, &R) -> Vec<T> + Sync,
{
    struct Queue<T> {
        waiting: VecDeque<T>,
        /// Items being worked on: their follow-ups may still come.
        busy: usize,
    }
    let queue = Mutex::new(Queue {
        waiting: items.into(),
        busy: 0,
    });
    let changed = Condvar::new();
    let done = Mutex::new(Vec::new());
    let lock = || queue.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::scope(|scope| {
        // Every worker starts, however few the items: follow-ups may need them.
        for _ in 0..workers.max(1) {
            scope.spawn(|| {
                loop {
                    let next = {
                        let mut q = lock();
                        loop {
                            if let Some(item) = q.waiting.pop_front() {
                                q.busy += 1;
                                break Some(item);
                            }
                            if q.busy == 0 {
                                break None;
                            }
                            q = changed.wait(q).unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    let Some(item) = next else {
                        changed.notify_all();
                        break;
                    };
                    let result = work(&item);
                    let more = follow_up(&item, &result);
                    done.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((item, result));
                    let mut q = lock();
                    for item in more.into_iter().rev() {
                        q.waiting.push_front(item);
                    }
                    q.busy -= 1;
                    drop(q);
                    changed.notify_all();
                }
            });
        }
    });
    done.into_inner().unwrap_or_else(|e| e.into_inner())
}

fn send(client: &Client, probe: &HttpProbe, deadline: Instant) -> Observation {
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
    client.request(
        &probe.method,
        &probe.path,
        &headers,
        probe.body.as_deref(),
        probe.keep,
    )
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
    fn follow_ups_go_ahead_of_the_waiting_items() {
        // One worker shows the order: the follow-ups of "discovery" come before "b".
        let order = Mutex::new(Vec::new());
        let items = vec!["discovery", "a", "b"];
        let done = run_queue(
            items,
            1,
            |item| order.lock().unwrap().push(*item),
            |item, _| match *item {
                "discovery" => vec!["sign-in 1", "sign-in 2"],
                _ => Vec::new(),
            },
        );
        assert_eq!(
            order.into_inner().unwrap(),
            ["discovery", "sign-in 1", "sign-in 2", "a", "b"]
        );
        assert_eq!(done.len(), 5);
    }

    #[test]
    fn follow_ups_of_the_only_item_get_every_worker() {
        // The follow-ups wait at a barrier for all three workers: a pool that started only as
        // many workers as it had items at first would hang (and the runner's timeout end it).
        let barrier = std::sync::Barrier::new(3);
        let done = run_queue(
            vec![0u8],
            3,
            |item| {
                if *item > 0 {
                    barrier.wait();
                }
            },
            |item, _| {
                if *item == 0 {
                    vec![1, 2, 3]
                } else {
                    Vec::new()
                }
            },
        );
        assert_eq!(done.len(), 4);
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
