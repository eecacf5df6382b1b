//! Times as people read them, the server's clock as the browser reckons it, and the timers that
//! keep pages live in the browser.

use std::time::Duration;

use chrono::{DateTime, Utc};
use leptos::prelude::*;

/// An instant, naming its zone: UTC in the server's HTML (and without JavaScript), the
/// browser's local time and offset once the page is live ("2030-06-01 10:00:30 UTC+08:00").
/// An island of its own in a server component; inside another island, a plain part of it.
#[island]
pub fn When(#[prop(into)] at: Instant) -> impl IntoView {
    let Instant(at) = at;
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    view! {
        <time datetime=at.to_rfc3339()>
            {move || if live.get() { local_time(at) } else { format!("{} UTC", wall_clock(&at.naive_utc())) }}
        </time>
    }
}

/// An instant as an island's prop: RFC 3339 in the page, read back by `domain::rfc3339`
/// rather than chrono's general parser (design.md decision 36).
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Instant(#[serde(deserialize_with = "domain::rfc3339::deserialize")] pub DateTime<Utc>);

impl From<DateTime<Utc>> for Instant {
    fn from(at: DateTime<Utc>) -> Self {
        Self(at)
    }
}

/// `at` in the browser's time zone, with it (UTC on the server).
pub fn local_time(at: DateTime<Utc>) -> String {
    #[cfg(feature = "hydrate")]
    {
        use chrono::Offset;
        let local = at.with_timezone(&chrono::Local);
        format!(
            "{} {}",
            wall_clock(&local.naive_local()),
            zone_name(local.offset().fix())
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        format!("{} UTC", wall_clock(&at.naive_utc()))
    }
}

/// `2030-06-01 10:00:30`. By hand rather than through chrono's `format`: its format-string
/// machinery would weigh on every page's browser bundle for this one shape.
pub fn wall_clock(t: &chrono::NaiveDateTime) -> String {
    use chrono::{Datelike, Timelike};
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A UTC offset as people read it: `UTC`, `UTC+08:00`, `UTC-05:30`.
pub fn zone_name(offset: chrono::FixedOffset) -> String {
    if offset.local_minus_utc() == 0 {
        "UTC".to_owned()
    } else {
        format!("UTC{offset}")
    }
}

/// The browser's current UTC offset (`None` on the server, which cannot know it).
pub fn browser_zone() -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        use chrono::Offset;
        Some(zone_name(chrono::Local::now().offset().fix()))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        None
    }
}

/// Calls `tick` every `period` while the calling component lives (browser only; nothing
/// runs on the server).
pub fn every(period: Duration, tick: impl Fn() + 'static) {
    #[cfg(feature = "hydrate")]
    {
        let tick = std::rc::Rc::new(tick);
        Effect::new(move |_| {
            let tick = tick.clone();
            if let Ok(handle) = set_interval_with_handle(move || tick(), period) {
                on_cleanup(move || handle.clear());
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (period, tick);
    }
}

/// The server's clock as the browser reckons it: the browser's clock minus how far it is
/// ahead of the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerClock {
    ahead: chrono::Duration,
}

impl ServerClock {
    /// Assumes `server_time` was read just now (a rough first guess: a time rendered into the
    /// page is already as old as the page's load).
    pub fn synced_to(server_time: DateTime<Utc>) -> Self {
        Self::from_round_trip(Utc::now(), Utc::now(), server_time)
    }

    /// From a request sent at `sent` and answered at `received` (browser clock) with the
    /// server's `server_time`, read half-way through the round trip.
    pub fn from_round_trip(
        sent: DateTime<Utc>,
        received: DateTime<Utc>,
        server_time: DateTime<Utc>,
    ) -> Self {
        let midpoint = sent + (received - sent) / 2;
        Self {
            ahead: midpoint - server_time,
        }
    }

    pub fn now(self) -> DateTime<Utc> {
        self.at(Utc::now())
    }

    /// The server's time when the browser's clock reads `browser_time`.
    pub fn at(self, browser_time: DateTime<Utc>) -> DateTime<Utc> {
        browser_time - self.ahead
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_times_read_like_chrono_formats_them() {
        let t = DateTime::parse_from_rfc3339("2030-06-01T09:05:03.999Z")
            .expect("a time")
            .naive_utc();
        assert_eq!(wall_clock(&t), t.format("%Y-%m-%d %H:%M:%S").to_string());
        assert_eq!(wall_clock(&t), "2030-06-01 09:05:03");
    }

    #[test]
    fn the_server_clock_is_read_half_way_through_the_round_trip() {
        let t = |ms: i64| DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(ms);
        // Browser 5 s ahead: sent at 10,000, answered at 10,200, server read 5,100.
        let clock = ServerClock::from_round_trip(t(10_000), t(10_200), t(5_100));
        assert_eq!(clock.at(t(10_100)), t(5_100));
        assert_eq!(clock.at(t(20_000)), t(15_000));
    }
}
