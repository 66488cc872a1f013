//! The requests a server is reading: at most so many at once. A client that drips its request
//! head (or body) a byte at a time holds a reader, never a worker; past the cap, every new
//! connection evicts the read that has gone on longest, so however many addresses drip, a
//! request sent whole (a health check, a scrape) is read at once. A request sent whole is read
//! in its first read: it is never the oldest for long.

use super::lock;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The reads in progress (and waiting for a reader), oldest first.
#[derive(Debug)]
pub struct Reading {
    max: usize,
    slots: Mutex<Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    next: u64,
    by_age: BTreeMap<u64, Arc<AtomicBool>>,
}

/// One connection's place among the reads: dropping it leaves the table.
#[derive(Debug)]
pub struct Ticket {
    id: u64,
    evicted: Arc<AtomicBool>,
    reading: Arc<Reading>,
}

impl Reading {
    /// At most `max` reads at once.
    pub fn new(max: usize) -> Arc<Reading> {
        Arc::new(Reading {
            max: max.max(1),
            slots: Mutex::new(Slots::default()),
        })
    }

    /// A place for a new connection's read; when that makes one more than the cap, the
    /// longest read is told to give up ([`Ticket::evicted`]).
    pub fn enter(self: &Arc<Self>) -> Ticket {
        let evicted = Arc::new(AtomicBool::new(false));
        let mut slots = lock(&self.slots);
        slots.next += 1;
        let id = slots.next;
        slots.by_age.insert(id, evicted.clone());
        if slots.by_age.len() > self.max {
            Self::evict_oldest_of(&mut slots);
        }
        Ticket {
            id,
            evicted,
            reading: self.clone(),
        }
    }

    /// Tells the longest read to give up (the server is out of file descriptors: its socket
    /// is one); whether there was one.
    pub fn evict_oldest(&self) -> bool {
        Self::evict_oldest_of(&mut lock(&self.slots))
    }

    fn evict_oldest_of(slots: &mut Slots) -> bool {
        match slots.by_age.pop_first() {
            Some((_, evicted)) => {
                evicted.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// Reads in progress or waiting for a reader.
    pub fn count(&self) -> usize {
        lock(&self.slots).by_age.len()
    }
}

impl Ticket {
    /// Whether this read was told to give up for a newer one.
    pub fn evicted(&self) -> bool {
        self.evicted.load(Ordering::SeqCst)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        lock(&self.reading.slots).by_age.remove(&self.id);
    }
}

/// Connections accepted and waiting for a reader, oldest first. It never turns a new one away:
/// when it is full, what was evicted already goes first, then the oldest, so a burst of
/// connections from many addresses leaves the newest (a health check sent whole) in line.
#[derive(Debug)]
pub struct Waiting<T> {
    max: usize,
    queue: Mutex<(VecDeque<T>, bool)>,
    ready: Condvar,
}

impl<T> Waiting<T> {
    pub fn new(max: usize) -> Waiting<T> {
        Waiting {
            max: max.max(1),
            queue: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        }
    }

    /// Queues `item`, first dropping items `gone` says are of no use any more when the queue
    /// is full, then the oldest.
    pub fn push(&self, item: T, gone: impl Fn(&T) -> bool) {
        let mut guard = lock(&self.queue);
        let queue = &mut guard.0;
        if queue.len() >= self.max {
            queue.retain(|waiting| !gone(waiting));
        }
        while queue.len() >= self.max {
            queue.pop_front();
        }
        queue.push_back(item);
        drop(guard);
        self.ready.notify_one();
    }

    /// The oldest item, waiting for one; `None` once [`Waiting::close`]d and empty.
    pub fn pop(&self) -> Option<T> {
        let mut guard = lock(&self.queue);
        loop {
            if let Some(item) = guard.0.pop_front() {
                return Some(item);
            }
            if guard.1 {
                return None;
            }
            guard = self.ready.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// No more items: the takers end once the queue is empty.
    pub fn close(&self) {
        lock(&self.queue).1 = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_the_longest_read_gives_up() {
        let reading = Reading::new(2);
        let first = reading.enter();
        let second = reading.enter();
        assert!(!first.evicted() && !second.evicted());
        let third = reading.enter();
        assert!(first.evicted(), "the oldest gave up");
        assert!(!second.evicted() && !third.evicted());
        assert_eq!(reading.count(), 2);
        // A read that ended leaves room: nobody else gives up.
        drop(third);
        let fourth = reading.enter();
        assert!(!second.evicted() && !fourth.evicted());
        // Out of descriptors: the oldest gives up on request.
        assert!(reading.evict_oldest());
        assert!(second.evicted() && !fourth.evicted());
        drop((first, second, fourth));
        assert_eq!(reading.count(), 0);
        assert!(!reading.evict_oldest());
    }

    #[test]
    fn a_full_queue_drops_the_evicted_then_the_oldest_never_the_new() {
        let waiting = Waiting::new(3);
        for n in [1, 2, 3] {
            waiting.push(n, |_| false);
        }
        // Full: 2 is of no use any more, so it goes and 1 stays.
        waiting.push(4, |n| *n == 2);
        // Full again, nothing is gone: the oldest, 1, makes room.
        waiting.push(5, |_| false);
        waiting.close();
        let left: Vec<i32> = std::iter::from_fn(|| waiting.pop()).collect();
        assert_eq!(left, [3, 4, 5]);
    }
}
