//! The sale's live figures in the page: the server's clock, the stock and an early end, pushed
//! by the sale's stream, asked for while the stream is down.

use std::time::Duration;

use chrono::{DateTime, Utc};
use domain::VoucherStatus;
use leptos::prelude::*;

use crate::{
    live::follow_stream,
    rest,
    time::{every, ServerClock},
    wire::{StockNow, VoucherView},
};

/// How often the clock of the countdown ticks.
const TICK: Duration = Duration::from_millis(250);
/// How often the stock is asked for while no stream pushes it: during the sale, and otherwise
/// (until it ends).
const STOCK_DURING_SALE: Duration = Duration::from_secs(2);
const STOCK_OTHERWISE: Duration = Duration::from_secs(10);

/// A sale as the page shows it, kept live.
#[derive(Clone, Copy)]
pub struct LiveSale {
    /// The voucher, its stock and window moved by what the server says.
    pub voucher: RwSignal<VoucherView>,
    /// The server's time, ticking.
    pub now: RwSignal<DateTime<Utc>>,
    /// The sale's phase at `now`.
    pub phase: Memo<VoucherStatus>,
    /// The server's clock as the browser reckons it.
    pub clock: StoredValue<ServerClock>,
    /// A draw sale's entrants, pushed like the stock.
    pub entrants: RwSignal<i64>,
    /// When the figures were last heard of (server clock): the page's load counts as one.
    heard: StoredValue<DateTime<Utc>>,
    /// Whether a stream delivers the figures.
    pushed: StoredValue<bool>,
}

/// Follows `voucher` from the server's `server_time` on: the countdown's clock ticks, and the
/// figures come pushed by the sale's stream, or are asked for on a schedule while it is down
/// (browser only: nothing runs on the server).
pub fn use_live_sale(voucher: VoucherView, server_time: DateTime<Utc>) -> LiveSale {
    // The time in the page is as old as its load: the browser re-syncs on its first answer.
    let voucher = RwSignal::new(voucher);
    let now = RwSignal::new(server_time);
    let sale = LiveSale {
        clock: StoredValue::new(ServerClock::synced_to(server_time)),
        now,
        voucher,
        phase: Memo::new(move |_| voucher.read().status_at(now.get())),
        entrants: RwSignal::new(0),
        heard: StoredValue::new(server_time),
        pushed: StoredValue::new(false),
    };
    every(TICK, move || sale.now.set(sale.clock.get_value().now()));
    follow_pushed(sale);
    every(Duration::from_secs(1), move || {
        if sale.pushed.get_value() {
            return;
        }
        let period = match sale.phase.get_untracked() {
            VoucherStatus::Ended => return,
            VoucherStatus::OnSale => STOCK_DURING_SALE,
            VoucherStatus::Upcoming | VoucherStatus::SoldOut => STOCK_OTHERWISE,
        };
        let since = sale.clock.get_value().now() - sale.heard.get_value();
        if since.to_std().unwrap_or_default() >= period {
            sale.ask();
        }
    });
    sale
}

/// Follows the sale's stream: the server sends each change (and nothing while nothing
/// changes); an ended sale has nothing left to send. Down, `ask` at once (this also syncs the
/// clock when the stream never opened), then on the poll's schedule until the browser's
/// reconnection delivers again.
fn follow_pushed(sale: LiveSale) {
    if sale.phase.get_untracked() == VoucherStatus::Ended {
        return;
    }
    let opened = Utc::now();
    let id = sale.voucher.read_untracked().id;
    follow_stream(
        format!("/api/vouchers/{}/events", id.get()),
        "stock",
        move |s: StockNow| {
            // The first event follows the stream's opening: a round trip to sync the clock by.
            // Later ones keep that clock.
            let synced = if sale.pushed.get_value() {
                sale.clock.get_value()
            } else {
                ServerClock::from_round_trip(opened, Utc::now(), s.server_time)
            };
            sale.pushed.set_value(true);
            sale.apply(s, synced);
        },
        move || {
            sale.pushed.set_value(false);
            sale.ask();
        },
    );
}

impl LiveSale {
    /// The figures changed by this page's own doing (a buy it made, a sale it found sold out):
    /// a stream brings the change within its period, in order with everyone else's; without
    /// one, they are asked for now. The page never moves the figures by its own answer: a push
    /// that already counted the change may arrive before that answer, and the count would then
    /// be off until the next change (a buy counted twice).
    pub fn changed_here(self) {
        if !self.pushed.get_value() {
            self.ask();
        }
    }

    /// Asks the server for the figures.
    fn ask(self) {
        self.heard.set_value(self.clock.get_value().now());
        let path = format!("/api/vouchers/{}/stock", self.voucher.read_untracked().id);
        leptos::task::spawn_local(async move {
            let sent = Utc::now();
            if let Ok(s) = rest::get::<StockNow>(&path).await {
                let synced = ServerClock::from_round_trip(sent, Utc::now(), s.server_time);
                self.apply(s, synced);
            }
        });
    }

    /// Figures from the server, pushed or asked for: the stock and an early end.
    fn apply(self, s: StockNow, synced: ServerClock) {
        self.heard.set_value(synced.now());
        let _ = self.clock.try_update_value(|c| *c = synced);
        if let Some(left) = s.remaining {
            self.voucher.try_update(|v| v.remaining = left);
        }
        if self.voucher.read_untracked().opening.is_draw() {
            self.entrants.try_set(s.entrants);
        }
        // An admin may have ended the sale early: the page follows Redis's end.
        if let Some(end) = s.ends_at {
            self.voucher
                .try_update(|v| v.window = v.window.ended_by(end));
        }
    }
}
