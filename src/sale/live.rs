//! Live sale figures pushed to open pages (design.md §8, decision 20): each instance reads the
//! stock and end of the sales someone is watching on it, once per `SECKILL_PUSH_MS` for all of
//! them ([`crate::jobs`]'s live push), and hands each change to every watcher through a `watch`
//! channel. The cost in Redis
//! is one pipelined read per watched sale and period, however many pages watch it; a page
//! hears nothing while nothing changes (the minute before a sale opens is silent).
//!
//! A message per admission (a `PUBLISH` from the script) was the alternative; it would add work
//! to every buy of a rush, the one moment that must stay cheap, to tell pages what a period's
//! read tells them as well.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::watch;

use chrono::{DateTime, Utc};

use crate::domain::VoucherId;

/// A sale as Redis has it: what a sale page polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSale {
    /// Units left to admit.
    pub remaining: i64,
    /// When admissions stop (an admin may have ended the sale early).
    pub ends_at: DateTime<Utc>,
    /// A draw sale's entrants so far (0 for a first-come sale).
    pub entrants: i64,
}

/// What a watcher of one sale sees: `None` until the first read, or while the sale is not in
/// Redis.
pub type SaleFeed = watch::Receiver<Option<LiveSale>>;

/// The sales watched on this instance.
#[derive(Debug, Default)]
pub struct Live {
    sales: Mutex<HashMap<VoucherId, watch::Sender<Option<LiveSale>>>>,
}

impl Live {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Follows `voucher`'s live figures (current value first, then each change).
    pub fn watch(&self, voucher: VoucherId, now: Option<LiveSale>) -> SaleFeed {
        let mut sales = self.sales.lock().unwrap_or_else(|p| p.into_inner());
        let sender = sales
            .entry(voucher)
            .or_insert_with(|| watch::Sender::new(now));
        // A sale not in Redis right now keeps the figures its watchers last heard.
        if now.is_some() {
            publish(sender, now);
        }
        sender.subscribe()
    }

    /// Open watchers, over every sale.
    pub fn watchers(&self) -> usize {
        let sales = self.sales.lock().unwrap_or_else(|p| p.into_inner());
        sales.values().map(watch::Sender::receiver_count).sum()
    }

    /// Ends every watcher's feed (shutdown: open streams end, so connections can close).
    pub(crate) fn close_all(&self) {
        self.sales.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The watched sales, forgetting those nobody watches any more.
    pub(crate) fn watched(&self) -> Vec<(VoucherId, watch::Sender<Option<LiveSale>>)> {
        let mut sales = self.sales.lock().unwrap_or_else(|p| p.into_inner());
        sales.retain(|_, sender| sender.receiver_count() > 0);
        sales.iter().map(|(v, s)| (*v, s.clone())).collect()
    }
}

/// Hands `now` to the watchers if it differs from what they have (nothing sent otherwise).
pub(crate) fn publish(sender: &watch::Sender<Option<LiveSale>>, now: Option<LiveSale>) {
    sender.send_if_modified(|old| {
        let changed = *old != now;
        if changed {
            *old = now;
        }
        changed
    });
}
