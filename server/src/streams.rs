//! Sale streams per client: each client address may hold at most
//! `SECKILL_STREAMS_PER_CLIENT` open on one instance, so one client cannot fill the server's
//! connections with streams that never end (decision 26). A slot is freed when its stream is
//! dropped, whoever ends it.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex, PoisonError},
};

/// The open streams of every client on this instance.
#[derive(Debug, Clone)]
pub struct StreamSlots {
    per_client: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One open stream; dropping it frees its slot.
#[derive(Debug)]
pub struct StreamSlot {
    slots: StreamSlots,
    client: IpAddr,
}

impl StreamSlots {
    pub fn new(per_client: usize) -> Self {
        Self {
            per_client,
            open: Arc::default(),
        }
    }

    /// A slot for `client`, unless it holds its limit already.
    pub fn take(&self, client: IpAddr) -> Option<StreamSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let held = open.entry(client).or_insert(0);
        if *held >= self.per_client {
            return None;
        }
        *held += 1;
        Some(StreamSlot {
            slots: self.clone(),
            client,
        })
    }

    /// Streams `client` holds open.
    #[cfg(test)]
    fn held(&self, client: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(&client).copied().unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .slots
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = open.get_mut(&self.client) {
            *held -= 1;
            if *held == 0 {
                // No entry is kept for a client with no stream: the map holds open streams only.
                open.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_limit_and_a_freed_slot_back() {
        let slots = StreamSlots::new(2);
        let a: IpAddr = "203.0.113.1".parse().expect("ip");
        let b: IpAddr = "203.0.113.2".parse().expect("ip");
        let first = slots.take(a).expect("first");
        let _second = slots.take(a).expect("second");
        assert!(slots.take(a).is_none(), "a third is refused");
        assert!(slots.take(b).is_some(), "another client is not");
        drop(first);
        assert!(slots.take(a).is_some(), "a freed slot is taken again");
        drop(_second);
        assert_eq!(slots.held(b), 0, "b's dropped at once");
    }
}
