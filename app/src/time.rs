//! Times as people read them, the server's clock as the browser reckons it, and the timers that
//! keep pages live in the browser.

use std::time::Duration;

use chrono::{DateTime, Utc};
use leptos::prelude::*;

/// An instant as people in the shop read it: the shop's time zone, to the minute, in the page's
/// language (`11月27日 02:29`, `27 Nov, 02:29`), with its year when that is not this year
/// (`2027年1月5日 23:05`, `5 Jan 2027, 23:05`); the page says once which zone that is
/// ([`ZoneNote`]). The same on the server and in an island, with JavaScript or without.
#[component]
pub fn When(#[prop(into)] at: Instant) -> impl IntoView {
    let Instant(at) = at;
    view! { <time datetime=at.to_rfc3339()>{shop_time(at)}</time> }
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

/// `at` in the shop's zone and the page's language, to the minute; with its year when that is
/// not the year it is now in the shop's zone (an order history that spans years reads right).
pub fn shop_time(at: DateTime<Utc>) -> String {
    use chrono::Datelike;
    let offset = shop_offset();
    let this_year = Utc::now().with_timezone(&offset).year();
    format_in_year(
        crate::words::t(),
        &at.with_timezone(&offset).naive_local(),
        this_year,
    )
}

/// `11月27日 02:29` / `27 Nov, 02:29`: a time of its own year, without the year.
pub fn format_local(t: crate::words::Texts, local: &chrono::NaiveDateTime) -> String {
    use chrono::Datelike;
    format_in_year(t, local, local.year())
}

/// `11月27日 02:29` / `27 Nov, 02:29` in `this_year`, `2027年1月5日 23:05` / `5 Jan 2027, 23:05`
/// in another. By hand rather than through chrono's `format`: its format-string machinery would
/// weigh on every page's browser bundle for this one shape.
pub fn format_in_year(
    t: crate::words::Texts,
    local: &chrono::NaiveDateTime,
    this_year: i32,
) -> String {
    use chrono::{Datelike, Timelike};
    let month = t
        .months()
        .split(' ')
        .nth(local.month0() as usize)
        .unwrap_or_default();
    let clock = format!("{:02}:{:02}", local.hour(), local.minute());
    if local.year() == this_year {
        crate::words::fill(t.month_day_time(), &[&month, &local.day(), &clock])
    } else {
        crate::words::fill(
            t.year_month_day_time(),
            &[&month, &local.day(), &clock, &local.year()],
        )
    }
}

/// The shop's offset from UTC as the page shows its times: on the server the zone's
/// ([`set_shop_zone`], `SECKILL_TIME_ZONE`) now; in the browser the one the server wrote on
/// `<html data-utc-offset>`, so an island renders what the server did. (A zone that changes its
/// offset shows the page's times at the offset of the page's render, and says which.)
pub fn shop_offset() -> chrono::FixedOffset {
    #[cfg(feature = "ssr")]
    {
        use chrono::Offset;
        Utc::now().with_timezone(&shop_zone()).offset().fix()
    }
    #[cfg(not(feature = "ssr"))]
    {
        page_offset()
    }
}

#[cfg(not(feature = "ssr"))]
fn page_offset() -> chrono::FixedOffset {
    use chrono::Offset;
    let utc = Utc.fix();
    #[cfg(feature = "hydrate")]
    {
        thread_local! {
            static OFFSET: Option<chrono::FixedOffset> = leptos::prelude::document()
                .document_element()
                .and_then(|html| html.get_attribute("data-utc-offset"))
                .and_then(|secs| secs.parse::<i32>().ok())
                .and_then(chrono::FixedOffset::east_opt);
        }
        OFFSET.with(|o| o.unwrap_or(utc))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        utc
    }
}

/// The shop's time zone (`SECKILL_TIME_ZONE`), set once at the server's start.
#[cfg(feature = "ssr")]
static SHOP_ZONE: std::sync::OnceLock<chrono_tz::Tz> = std::sync::OnceLock::new();

/// The zone every page shows its times in; Asia/Shanghai until the server sets its own.
#[cfg(feature = "ssr")]
pub fn shop_zone() -> chrono_tz::Tz {
    SHOP_ZONE
        .get()
        .copied()
        .unwrap_or(chrono_tz::Asia::Shanghai)
}

/// Sets the shop's zone (the first call wins: one zone per process).
#[cfg(feature = "ssr")]
pub fn set_shop_zone(zone: chrono_tz::Tz) {
    if SHOP_ZONE.set(zone).is_err() && shop_zone() != zone {
        tracing::warn!(
            zone = %zone,
            kept = %shop_zone(),
            "the shop's time zone is set once per process; keeping the first"
        );
    }
}

/// The zone's name as people read it: "Beijing time (UTC+8)" for Asia/Shanghai, else its
/// IANA name and offset ("Europe/Berlin (UTC+01:00)", `Europe/Berlin（UTC+01:00）`).
pub fn zone_name(t: crate::words::Texts) -> String {
    let named = crate::words::fill(t.zone_offset(), &[&shop_offset()]);
    #[cfg(feature = "ssr")]
    {
        if shop_zone() == chrono_tz::Asia::Shanghai {
            return t.zone_beijing().to_owned();
        }
        format!(
            "{}{}",
            shop_zone().name(),
            crate::words::fill(t.bracketed(), &[&named])
        )
    }
    #[cfg(not(feature = "ssr"))]
    named
}

/// The zone's name beside a field, in brackets: " (Beijing time (UTC+8))", `（北京时间）` (a
/// Chinese reader needs no offset for Beijing time, nor brackets in brackets), else the IANA
/// name and offset (" (Europe/Berlin UTC+01:00)").
pub fn zone_label(t: crate::words::Texts) -> String {
    #[cfg(feature = "ssr")]
    let name = if shop_zone() == chrono_tz::Asia::Shanghai {
        t.zone_beijing_short().to_owned()
    } else {
        let named = crate::words::fill(t.zone_offset(), &[&shop_offset()]);
        format!("{} {named}", shop_zone().name())
    };
    #[cfg(not(feature = "ssr"))]
    let name = zone_name(t);
    crate::words::fill(t.bracketed(), &[&name])
}

/// "Times are Beijing time (UTC+8)." once on every page (server-rendered).
#[component]
pub fn ZoneNote() -> impl IntoView {
    let t = crate::words::t();
    view! { <p class="zone-note" data-testid="zone-note">{crate::words::fill(t.times_in_zone(), &[&zone_name(t)])}</p> }
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
    fn times_read_as_people_write_them_in_each_language() {
        let t = DateTime::parse_from_rfc3339("2026-11-27T02:29:55+08:00")
            .expect("a time")
            .naive_local();
        assert_eq!(format_local(i18n::Lang::ZhCn.texts(), &t), "11月27日 02:29");
        assert_eq!(format_local(i18n::Lang::En.texts(), &t), "27 Nov, 02:29");
        let t = DateTime::parse_from_rfc3339("2027-01-05T23:05:00Z")
            .expect("a time")
            .naive_utc();
        assert_eq!(format_local(i18n::Lang::ZhCn.texts(), &t), "1月5日 23:05");
        assert_eq!(format_local(i18n::Lang::En.texts(), &t), "5 Jan, 23:05");
    }

    #[test]
    fn a_time_of_another_year_says_its_year() {
        let t = DateTime::parse_from_rfc3339("2027-01-05T23:05:00Z")
            .expect("a time")
            .naive_utc();
        let (zh, en) = (i18n::Lang::ZhCn.texts(), i18n::Lang::En.texts());
        assert_eq!(format_in_year(zh, &t, 2027), "1月5日 23:05");
        assert_eq!(format_in_year(zh, &t, 2026), "2027年1月5日 23:05");
        assert_eq!(format_in_year(en, &t, 2028), "5 Jan 2027, 23:05");
        // Now is this year: no year.
        use chrono::Datelike;
        let year = Utc::now().with_timezone(&shop_offset()).year().to_string();
        assert!(!shop_time(Utc::now()).contains(&year));
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
