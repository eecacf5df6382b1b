//! Signed-in pages from a shared rendering (issue #25 point 4, design.md decision 31).
//!
//! The home page and a voucher's page differ between two signed-in shoppers who hold no order
//! on that sale only by who they are: the header's "signed in as" (the islands' props say only
//! "signed in", the same for all; decision 35; before islands the page also carried the
//! `whoami` data it hydrated from, user ID included, which `fill` still covers). So the page cache renders
//! such a page once, for a stand-in shopper (a session this instance signs for a user ID and a
//! phone no one has), keeps it like a shared page, and answers each shopper with the stand-in's
//! ID and phone replaced by theirs: the HTML the page would have been for them, hydration data
//! included. A draw sale's page (the shopper's own standing in its draw), a shopper holding an
//! order on the sale (their order in the buy panel) or a reminder of it (when it goes), an admin
//! (the console link) and a session from before signed tokens get their page rendered as
//! before.

use axum::http::HeaderValue;
use seckill::{
    auth::{self, Principal},
    catalog,
    domain::{Phone, UserId, VoucherId},
    reminders, sale, Core,
};
use webapi::http::SessionCookie;

/// The stand-in's user ID: no user's (IDs come from a sequence far below it), below 2^53 so a
/// browser's number keeps it, and no other number a page shows.
const STAND_IN_USER: i64 = 8_888_888_888_888;
/// The stand-in's phone: country code 999 is assigned to no country.
const STAND_IN_PHONE: &str = "+99988888888888";
/// How long the stand-in's session lasts (the instance signs a new one at each start).
const STAND_IN_LIFETIME_MS: i64 = 10 * 365 * 24 * 3_600_000;

/// The stand-in's session, as the cookie the template is rendered with.
#[derive(Clone)]
pub struct StandIn {
    cookie: HeaderValue,
}

impl StandIn {
    pub fn new(core: &Core, cookie: SessionCookie) -> Option<Self> {
        let now = chrono::Utc::now().timestamp_millis();
        let phone = Phone::try_from(STAND_IN_PHONE).ok()?;
        let token = core.session_keys.sign(
            UserId::from_db(STAND_IN_USER),
            &phone,
            now,
            now.saturating_add(STAND_IN_LIFETIME_MS),
        );
        let cookie = HeaderValue::from_str(&format!("{}={token}", cookie.name())).ok()?;
        Some(Self { cookie })
    }

    /// The `Cookie` header a template is rendered with.
    pub fn cookie(&self) -> &HeaderValue {
        &self.cookie
    }
}

/// The shopper behind `token` when their page of `path` may come from the template: a signed
/// session, no admin, and on a voucher's page a first-come sale and no order of theirs on it (as
/// the page's own `my_order_for` would find it). `None` for anything else, a store's error included: the
/// page is then rendered for them as before.
pub async fn eligible(core: &Core, token: &str, path: &str) -> Option<Principal> {
    if !auth::token::is_signed(token) {
        return None;
    }
    let shopper = auth::session(core, token).await.ok()??;
    if shopper.is_admin {
        return None;
    }
    if let Some(id) = path.strip_prefix("/vouchers/") {
        let voucher = VoucherId::try_from(id.parse::<i64>().ok()?).ok()?;
        // Through the catalog's front door: an ID past the newest voucher is nobody's page
        // without a query.
        let v = catalog::voucher(core, voucher).await.ok()??;
        // A draw sale's page shows where this shopper stands in its draw: theirs alone.
        if v.opening.is_draw() {
            return None;
        }
        // Before the sale opens, the page says whether this shopper asked for a reminder.
        let now = chrono::Utc::now();
        if now < reminders::opens_at(&v)
            && reminders::mine(core, shopper.user, voucher, now)
                .await
                .ok()?
                .is_some()
        {
            return None;
        }
        if sale::order_for(core, shopper.user, voucher)
            .await
            .ok()?
            .is_some()
        {
            return None;
        }
    }
    Some(shopper)
}

/// Whether a rendering is the stand-in's (its session was taken), so it can be made anyone's.
pub fn is_template(html: &str) -> bool {
    html.contains(STAND_IN_PHONE)
}

/// The template made `shopper`'s page.
pub fn fill(template: &str, shopper: &Principal) -> String {
    template
        .replace(STAND_IN_PHONE, shopper.phone.as_str())
        .replace(&STAND_IN_USER.to_string(), &shopper.user.get().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_becomes_the_shoppers_page() {
        let shopper = Principal {
            user: UserId::from_db(42),
            phone: Phone::try_from("+8613900000001").expect("phone"),
            is_admin: false,
        };
        let template = format!(
            r#"<span data-testid="signed-in-as">{STAND_IN_PHONE}</span><script>{{"user_id":{STAND_IN_USER},"phone":"{STAND_IN_PHONE}","is_admin":false}}</script>"#
        );
        assert!(is_template(&template));
        let page = fill(&template, &shopper);
        assert_eq!(
            page,
            r#"<span data-testid="signed-in-as">+8613900000001</span><script>{"user_id":42,"phone":"+8613900000001","is_admin":false}</script>"#
        );
        assert!(!is_template(&page));
    }
}
