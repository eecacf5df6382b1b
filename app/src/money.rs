//! Prices in the shop's currency (`SECKILL_CURRENCY`): one formatter for pages and islands
//! ([`domain::Currency::format`]). On the server the currency is the one set at start
//! ([`set_shop_currency`]); in the browser the one the server wrote on `<html data-currency>`,
//! so an island writes a price as the server did.

use domain::Currency;

/// `cents` (the currency's minor units) as people read the price: `¥9.90`, `€9.90`.
pub fn price(cents: i64) -> String {
    shop_currency().format(cents)
}

/// The symbol before a price (`¥`, `€`; the code where there is none), for a price's field.
pub fn symbol() -> String {
    shop_currency().symbol()
}

/// The currency of every price the shop shows.
pub fn shop_currency() -> Currency {
    #[cfg(feature = "ssr")]
    {
        SHOP_CURRENCY.get().cloned().unwrap_or_default()
    }
    #[cfg(not(feature = "ssr"))]
    {
        page_currency()
    }
}

/// The shop's currency, set once at the server's start.
#[cfg(feature = "ssr")]
static SHOP_CURRENCY: std::sync::OnceLock<Currency> = std::sync::OnceLock::new();

/// Sets the shop's currency (the first call wins: one currency per process).
#[cfg(feature = "ssr")]
pub fn set_shop_currency(currency: Currency) {
    if let Err(refused) = SHOP_CURRENCY.set(currency) {
        if refused != shop_currency() {
            tracing::warn!(
                currency = %refused,
                kept = %shop_currency(),
                "the shop's currency is set once per process; keeping the first"
            );
        }
    }
}

/// `<html data-currency>` as the server wrote it (browser; the default elsewhere).
#[cfg(not(feature = "ssr"))]
fn page_currency() -> Currency {
    #[cfg(feature = "hydrate")]
    {
        thread_local! {
            static CURRENCY: Currency = leptos::prelude::document()
                .document_element()
                .and_then(|html| html.get_attribute("data-currency"))
                .and_then(|code| code.parse().ok())
                .unwrap_or_default();
        }
        CURRENCY.with(Clone::clone)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        Currency::default()
    }
}
