//! Pieces every page uses: the session, the admin guard, times, error notes and the timers that
//! keep pages live in the browser.

use std::time::Duration;

use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_router::{components::Redirect, hooks::use_location};

use crate::{api::whoami, error::AppError, wire::Me};

/// Who is signed in, shared by the header and the guarded pages. `changed` is bumped after a
/// sign-in or sign-out, which reloads `me`.
#[derive(Clone, Copy)]
pub struct Session {
    pub me: Resource<Result<Option<Me>, AppError>>,
    pub changed: RwSignal<u64>,
}

impl Session {
    /// Creates the session for the app (once, in `App`).
    pub fn provide() -> Self {
        let changed = RwSignal::new(0_u64);
        let me = Resource::new(move || changed.get(), |_| whoami());
        let session = Self { me, changed };
        provide_context(session);
        session
    }

    pub fn get() -> Self {
        expect_context::<Self>()
    }

    /// Reloads `me` (after signing in or out).
    pub fn reload(self) {
        self.changed.update(|n| *n += 1);
    }
}

/// A path of this site (`/x`), not another site's address (`//host`, `https://…`): the only
/// kind of `next` the sign-in page follows.
fn is_local_path(next: &str) -> bool {
    next.starts_with('/') && !next.starts_with("//")
}

/// `/login?next=<here>`: where a page sends an anonymous visitor.
pub fn sign_in_path(next: &str) -> String {
    if is_local_path(next) && next != "/" && next != "/login" {
        format!("/login?next={}", encode_query(next))
    } else {
        "/login".to_owned()
    }
}

/// Where to go after signing in: `next` when it is a path of this site, else the home page.
pub fn safe_next(next: Option<String>) -> String {
    next.filter(|n| is_local_path(n))
        .unwrap_or_else(|| "/".to_owned())
}

/// Percent-encodes what a path may hold that a query value may not.
pub fn encode_query(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '/' | '-' | '_' | '.' | '~' => c.to_string(),
            other => {
                let mut buf = [0_u8; 4];
                other
                    .encode_utf8(&mut buf)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect()
            }
        })
        .collect()
}

/// Admins see `children`; other shoppers a 403 page; anonymous visitors go to sign-in.
#[component]
pub fn AdminOnly(children: ChildrenFn) -> impl IntoView {
    let session = Session::get();
    let here = use_location().pathname;
    let children = StoredValue::new(children);
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Checking your account…"</p> }>
            {move || Suspend::new(async move {
                match session.me.await {
                    Ok(Some(m)) if m.is_admin => children.read_value()().into_any(),
                    Ok(Some(_)) => view! { <Forbidden/> }.into_any(),
                    Ok(None) => view! { <Redirect path=sign_in_path(&here.get_untracked())/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Sets the HTTP status of the page being rendered on the server (pages are sent whole, so
/// it reaches the response); nothing in the browser.
pub fn set_page_status(status: u16) {
    #[cfg(feature = "ssr")]
    {
        let code = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(code);
        }
    }
    let _ = status;
}

/// Signed in, but not an admin.
#[component]
pub fn Forbidden() -> impl IntoView {
    set_page_status(403);
    view! {
        <leptos_meta::Title text="Admins only"/>
        <section class="panel" data-testid="forbidden">
            <h1>"403: admins only"</h1>
            <p>"This page is for the shop's admins. Your account can buy vouchers, not manage them."</p>
            <p><a href="/">"Back to the vouchers"</a></p>
        </section>
    }
}

/// An error in words, with the way out when there is one.
#[component]
pub fn ErrorNote(error: AppError) -> impl IntoView {
    let here = use_location().pathname;
    let action = match &error {
        AppError::Unauthenticated => Some(view! {
            " " <a href=sign_in_path(&here.get_untracked()) data-testid="sign-in-link">"Sign in"</a>
        }.into_any()),
        AppError::AlreadyBought(order) => Some(view! {
            " " <a href=format!("/orders/{order}") data-testid="your-order-link">"See your order"</a>
        }.into_any()),
        _ => None,
    };
    view! {
        <p class="error" role="alert" data-testid="error" data-code=error.code()>
            {error.to_string()} {action}
        </p>
    }
}

/// An instant, naming its zone: UTC in the server's HTML (and without JavaScript), the
/// browser's local time and offset once the page is live ("2030-06-01 10:00:30 UTC+08:00").
#[component]
pub fn When(at: DateTime<Utc>) -> impl IntoView {
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    view! {
        <time datetime=at.to_rfc3339()>
            {move || if live.get() { local_time(at) } else { at.format("%Y-%m-%d %H:%M:%S UTC").to_string() }}
        </time>
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
            local.format("%Y-%m-%d %H:%M:%S"),
            zone_name(local.offset().fix())
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    }
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
    fn the_server_clock_is_read_half_way_through_the_round_trip() {
        let t = |ms: i64| DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(ms);
        // Browser 5 s ahead: sent at 10,000, answered at 10,200, server read 5,100.
        let clock = ServerClock::from_round_trip(t(10_000), t(10_200), t(5_100));
        assert_eq!(clock.at(t(10_100)), t(5_100));
        assert_eq!(clock.at(t(20_000)), t(15_000));
    }

    #[test]
    fn sign_in_comes_back_only_to_local_paths() {
        assert_eq!(sign_in_path("/admin"), "/login?next=/admin");
        assert_eq!(sign_in_path("/orders/12"), "/login?next=/orders/12");
        assert_eq!(sign_in_path("//evil.example"), "/login");
        assert_eq!(sign_in_path("https://evil.example"), "/login");
        assert_eq!(sign_in_path("/"), "/login");
        assert_eq!(sign_in_path("/a b&c"), "/login?next=/a%20b%26c");
    }
}
