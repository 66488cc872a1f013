//! The MCP sessions of one server: who holds them, and who gives one up at the cap.

use super::*;

/// The sessions of this process: id → (sequence, client, network); sequence → id, for each
/// client (an address, an IPv6 /64) and each network (IPv4 /24, IPv6 /56).
#[derive(Default)]
pub struct Sessions {
    by_id: HashMap<String, (u64, String, String)>,
    by_client: HashMap<String, BTreeMap<u64, String>>,
    by_network: HashMap<String, BTreeMap<u64, String>>,
    next: u64,
}

/// The table is full and no network holds more than one session: nobody's is ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Full;

impl Sessions {
    /// A new session of `client` in `network`. The client's own oldest goes first when it
    /// holds [`MAX_SESSIONS_PER_CLIENT`]. When [`MAX_SESSIONS`] are held, the network holding
    /// the most sessions gives up its oldest, if it holds more than one; otherwise the new
    /// session is refused. So many addresses, each within its own limits, never end the one
    /// session of another client: they end their own networks' first.
    pub(super) fn insert(&mut self, id: String, client: &str, network: &str) -> Result<(), Full> {
        while let Some(oldest) = self
            .by_client
            .get(client)
            .filter(|own| own.len() >= MAX_SESSIONS_PER_CLIENT)
            .and_then(|own| own.values().next().cloned())
        {
            self.remove(&oldest);
        }
        while self.by_id.len() >= MAX_SESSIONS {
            // The busiest network; of several as busy, the one whose oldest session is oldest.
            let busiest = self
                .by_network
                .values()
                .max_by_key(|held| (held.len(), held.keys().next().map(|seq| u64::MAX - seq)))
                .filter(|held| held.len() > 1)
                .and_then(|held| held.values().next().cloned());
            match busiest {
                Some(oldest) => self.remove(&oldest),
                None => return Err(Full),
            };
        }
        self.next += 1;
        for (index, key) in [
            (&mut self.by_client, client),
            (&mut self.by_network, network),
        ] {
            index
                .entry(key.to_string())
                .or_default()
                .insert(self.next, id.clone());
        }
        self.by_id
            .insert(id, (self.next, client.to_string(), network.to_string()));
        Ok(())
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    pub(super) fn remove(&mut self, id: &str) -> bool {
        let Some((seq, client, network)) = self.by_id.remove(id) else {
            return false;
        };
        for (index, key) in [
            (&mut self.by_client, client),
            (&mut self.by_network, network),
        ] {
            if let Some(own) = index.get_mut(&key) {
                own.remove(&seq);
                if own.is_empty() {
                    // No entry outlives its last session.
                    index.remove(&key);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of a client at `ip`, keyed as `initialize` keys it.
    fn open(s: &mut Sessions, id: &str, ip: &str) -> Result<(), Full> {
        let ip: std::net::IpAddr = ip.parse().unwrap();
        s.insert(
            id.to_string(),
            &limits::address_key(ip),
            &limits::network_key(ip),
        )
    }

    /// Issue 31, item 4: after a victim opened a session, 1,000 other addresses opening 10
    /// sessions each (within their own limits) fill the table; the victim's session stays,
    /// the flood ends its own networks' oldest.
    #[test]
    fn many_clients_cannot_end_another_clients_session() {
        let mut s = Sessions::default();
        open(&mut s, "victim", "192.0.2.7").unwrap();
        for address in 0..1_000 {
            let ip = format!("10.0.{}.{}", address / 250, address % 250 + 1);
            for i in 0..10 {
                open(&mut s, &format!("a{address}-{i}"), &ip).unwrap();
            }
        }
        assert_eq!(s.by_id.len(), MAX_SESSIONS);
        assert!(s.contains("victim"));
        // The first network's oldest went first.
        assert!(!s.contains("a0-0") && s.contains("a999-9"));
        // An IPv6 victim in a /56 of its own is as safe.
        let mut s = Sessions::default();
        open(&mut s, "victim6", "2001:db8:1::7").unwrap();
        for address in 0..1_000u32 {
            let ip = format!("2001:db8:2:{:x}::1", address);
            for i in 0..10 {
                open(&mut s, &format!("b{address}-{i}"), &ip).unwrap();
            }
        }
        assert!(s.contains("victim6"));
    }

    /// When no network holds more than one session, a full table refuses the next one
    /// instead of ending anybody's.
    #[test]
    fn a_full_table_of_single_sessions_refuses() {
        let mut s = Sessions::default();
        for i in 0..MAX_SESSIONS as u32 {
            let ip = std::net::Ipv4Addr::from((10 << 24) | (i << 8) | 1);
            open(&mut s, &format!("s{i}"), &ip.to_string()).unwrap();
        }
        assert_eq!(open(&mut s, "late", "192.0.2.7"), Err(Full));
        assert!(s.contains("s0") && !s.contains("late"));
        // One ends: there is room again.
        assert!(s.remove("s5"));
        assert!(!s.remove("s5"));
        open(&mut s, "late", "192.0.2.7").unwrap();
        assert_eq!(s.by_id.len(), MAX_SESSIONS);
    }

    /// A flood of sessions from one client ends that client's own oldest, never another's.
    #[test]
    fn one_client_cannot_evict_another_clients_session() {
        let mut s = Sessions::default();
        open(&mut s, "theirs", "192.0.2.7").unwrap();
        for i in 0..10_050 {
            open(&mut s, &format!("flood{i}"), "198.51.100.9").unwrap();
        }
        assert!(s.contains("theirs"));
        assert_eq!(s.by_id.len(), MAX_SESSIONS_PER_CLIENT + 1);
        assert!(
            s.contains("flood10049")
                && !s.contains(&format!("flood{}", 10_049 - MAX_SESSIONS_PER_CLIENT))
        );
        assert_eq!(s.by_client["198.51.100.9"].len(), MAX_SESSIONS_PER_CLIENT);
        // Ending sessions leaves no trace of the client or its network.
        for i in 10_050 - MAX_SESSIONS_PER_CLIENT..10_050 {
            assert!(s.remove(&format!("flood{i}")));
        }
        assert!(!s.by_client.contains_key("198.51.100.9"));
        assert!(!s.by_network.contains_key("198.51.100.0/24"));
    }

    #[test]
    fn an_ipv6_client_is_its_slash_64() {
        use std::net::IpAddr;
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        let key = super::limits::address_key;
        assert_eq!(key(a), key(b));
        assert_ne!(key(a), key(c));
        assert_eq!(key("::ffff:192.0.2.1".parse().unwrap()), "192.0.2.1");
    }
}
