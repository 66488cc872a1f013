//! Seats under two caps: at most so many per key (one client address) and, optionally, so many
//! in all. What a server holds for a client (an open connection, a call waiting for its scan)
//! takes a seat for as long as it holds it; a client over its share is told so at once instead
//! of taking what other clients need.

use super::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct Occupancy {
    per_key: usize,
    total: Option<usize>,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_key: HashMap<String, usize>,
}

/// One taken seat; dropping it frees it.
#[derive(Debug)]
pub struct Seat {
    occupancy: Arc<Occupancy>,
    key: String,
}

impl Occupancy {
    /// `per_key` seats for each key, and at most `total` in all when given.
    pub fn new(per_key: usize, total: Option<usize>) -> Arc<Occupancy> {
        Arc::new(Occupancy {
            per_key,
            total,
            held: Mutex::new(Held::default()),
        })
    }

    /// A seat for `key`, or `None` when the key holds its share or every seat is taken.
    pub fn take(self: &Arc<Self>, key: &str) -> Option<Seat> {
        let mut held = lock(&self.held);
        if self.total.is_some_and(|total| held.total >= total) {
            return None;
        }
        let by_key = held.by_key.entry(key.to_string()).or_default();
        if *by_key >= self.per_key {
            return None;
        }
        *by_key += 1;
        held.total += 1;
        Some(Seat {
            occupancy: self.clone(),
            key: key.to_string(),
        })
    }

    /// The seats taken in all.
    pub fn taken(&self) -> usize {
        lock(&self.held).total
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut held = lock(&self.occupancy.held);
        held.total = held.total.saturating_sub(1);
        if let Some(count) = held.by_key.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                // No entry outlives its last seat: the map holds only the clients present.
                held.by_key.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_its_share_and_the_total_caps_all() {
        let seats = Occupancy::new(2, Some(3));
        let a1 = seats.take("a").expect("first seat of a");
        let _a2 = seats.take("a").expect("second seat of a");
        assert!(seats.take("a").is_none(), "a holds its share");
        let _b1 = seats.take("b").expect("b has its own share");
        assert!(seats.take("c").is_none(), "every seat is taken");
        drop(a1);
        assert_eq!(seats.taken(), 2);
        assert!(seats.take("c").is_some(), "a freed seat is free for anyone");
    }

    #[test]
    fn without_a_total_only_the_share_counts_and_nothing_is_left_behind() {
        let seats = Occupancy::new(1, None);
        let taken: Vec<Seat> = (0..100)
            .map(|n| seats.take(&n.to_string()).unwrap())
            .collect();
        assert!(seats.take("7").is_none());
        drop(taken);
        assert_eq!(seats.taken(), 0);
        assert!(lock(&seats.held).by_key.is_empty());
    }
}
