//! A small in-process map whose entries expire: what an instance remembers for a moment to answer
//! without a store (sessions, sales that refuse everyone, the server's shared renderings).

use std::{
    borrow::Borrow,
    collections::HashMap,
    hash::Hash,
    sync::Mutex,
    time::{Duration, Instant},
};

/// A small map whose entries expire. Bounded: past `cap` entries, expired ones go, and if that
/// is not enough, all of them (a memory, not a store).
#[derive(Debug)]
pub struct TtlMap<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
    ttl: Duration,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> TtlMap<K, V> {
    pub fn new(ttl: Duration, cap: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            ttl,
            cap,
        }
    }

    /// The value of `key`, unless it has expired.
    pub fn get<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(until, _)| *until > Instant::now())
            .map(|(_, v)| v.clone())
    }

    /// Remembers `value` for the map's time to live.
    pub fn insert(&self, key: K, value: V) {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.cap {
            entries.retain(|_, (until, _)| *until > now);
            if entries.len() >= self.cap {
                entries.clear();
            }
        }
        entries.insert(key, (now + self.ttl, value));
    }

    pub fn remove<Q: Eq + Hash + ?Sized>(&self, key: &Q)
    where
        K: Borrow<Q>,
    {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_map_stays_bounded() {
        let m = TtlMap::new(Duration::from_millis(30), 3);
        m.insert(1, "a");
        assert_eq!(m.get(&1), Some("a"));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(m.get(&1), None, "expired");
        for k in 0..10 {
            m.insert(k, "b");
        }
        assert!(m.entries.lock().expect("lock").len() <= 3);
        assert_eq!(m.get(&9), Some("b"), "the newest is kept");
        m.remove(&9);
        assert_eq!(m.get(&9), None);
    }
}
