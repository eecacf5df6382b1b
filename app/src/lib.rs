//! The seckill UI: one Leptos app rendered on the server (`ssr`), whose pages are server
//! components; only their islands (`#[island]`: the countdowns, live figures, buy and pay
//! panels, the forms that answer in place) reach the browser (`hydrate`), each hydrated from
//! its props (design.md decision 35). The server functions (`api`) are thin adapters over the
//! core library (`seckill`), which only the `ssr` build links; both builds share the `domain`
//! crate's types.

#![recursion_limit = "256"]

pub mod api;
pub mod components;
pub mod live;
pub mod money;
pub mod pages;
pub mod refusal;
pub mod rest;
pub mod session;
#[cfg(feature = "ssr")]
pub mod ssr;
pub mod time;
pub mod url;
pub mod words;

/// The web API's shared types, under the names the UI uses.
pub use webapi::{error, wire};

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, HashedStylesheet, MetaTags, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    path, SsrMode,
};

/// The HTML document around the app (server-rendered only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let lang = words::lang();
    // The shop's offset, for the islands' times (`time::shop_offset`).
    let offset = time::shop_offset().local_minus_utc();
    // And its currency, for the islands' prices (`money::shop_currency`).
    let currency = money::shop_currency();
    view! {
        <!DOCTYPE html>
        <html lang=lang.tag() data-utc-offset=offset data-currency=currency.as_str().to_owned()>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="data:,"/>
                <AutoReload options=options.clone()/>
                // `/pkg/seckill.css`, or its hashed name when the build wrote one.
                <HashedStylesheet options=options.clone() id="leptos"/>
                <HydrationScripts options=bundle_for_page(options) islands=true/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The options naming the page's browser bundle (design.md decisions 38 and 54): the home
/// page's (`seckill-home`) for `/`, a first-come sale's (`seckill-sale`) under `/vouchers/`, a
/// draw sale's (`seckill-draw`) for the pages the server marks [`PageSet`] `draw-sales`, the
/// admin pages' (`seckill-admin`) under `/admin`, and the shoppers' whole one (`seckill`)
/// everywhere else, each also under the build's hash; `seckill` wherever the build did not make
/// the page's own. A cold visit downloads only its page's islands; a shopper never downloads
/// the console, nor a first-come sale's visitor the draw.
fn bundle_for_page(options: LeptosOptions) -> LeptosOptions {
    #[cfg(feature = "ssr")]
    {
        let page = use_context::<http::request::Parts>().and_then(|p| {
            p.extensions
                .get::<PageSet>()
                .and_then(|set| set_bundle(set.0))
                .or_else(|| page_bundle(p.uri.path()))
        });
        if let Some(page) = page {
            let name = bundle_name(&options.output_name, page);
            // A build that made only the whole bundle (`cargo leptos watch`): it serves every
            // page, as it has every island. The site's files do not change while the server
            // runs: each bundle's presence is looked up once, not on every render.
            if bundle_built(&options, &name) {
                let mut options = options;
                options.output_name = name.into();
                return options;
            }
        }
    }
    options
}

/// Whether the site holds bundle `name` (`.wasm`), looked up once per file.
#[cfg(feature = "ssr")]
fn bundle_built(options: &LeptosOptions, name: &str) -> bool {
    use std::{
        collections::HashMap,
        sync::{Mutex, OnceLock, PoisonError},
    };
    static BUILT: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let path = std::path::Path::new(&*options.site_root)
        .join(&*options.site_pkg_dir)
        .join(format!("{name}.wasm"));
    *built
        .entry(path.to_string_lossy().into_owned())
        .or_insert_with(|| path.is_file())
}

include!(concat!(env!("OUT_DIR"), "/page_bundles.rs"));

/// A set of pages the server names for the page being rendered, which loads the bundle
/// `bundles.txt` gives that set instead of its path's (a request extension: `draw-sales`, a
/// draw sale's page, decision 54).
#[cfg(feature = "ssr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSet(pub &'static str);

#[cfg(feature = "ssr")]
impl PageSet {
    /// A draw sale's page: its bundle carries the draw panel, the first-come one does not.
    pub const DRAW_SALES: Self = Self("draw-sales");
}

/// The suffix of the bundle made for the pages the server names `set`, if one is.
#[cfg(any(feature = "ssr", test))]
fn set_bundle(set: &str) -> Option<&'static str> {
    PAGE_BUNDLES
        .iter()
        .find_map(|(pages, suffix)| (*pages == set && !set.starts_with('/')).then_some(*suffix))
}

/// The suffix of the bundle made for the page at `path`, if one is (`bundles.txt`: `/` that
/// path alone, `/p/` every path under it, `/p` that path and every path under it).
#[cfg(any(feature = "ssr", test))]
fn page_bundle(path: &str) -> Option<&'static str> {
    PAGE_BUNDLES.iter().find_map(|(pages, suffix)| {
        let claims = if !pages.starts_with('/') {
            false
        } else if *pages == "/" {
            path == "/"
        } else if pages.ends_with('/') {
            path.starts_with(pages)
        } else {
            path.strip_prefix(pages)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        claims.then_some(*suffix)
    })
}

/// `seckill.<hash>` → `seckill-<page>.<hash>`; `seckill` → `seckill-<page>`.
#[cfg(any(feature = "ssr", test))]
fn bundle_name(output_name: &str, page: &str) -> String {
    match output_name.split_once('.') {
        Some((name, hash)) => format!("{name}-{page}.{hash}"),
        None => format!("{output_name}-{page}"),
    }
}

/// The routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let session = session::Session::provide();
    let mode = session::Mode::provide();
    let t = words::t();
    view! {
        // Every page names itself (`<Title text=…/>`); this puts the shop's name after it.
        <Title formatter=move |text: String| words::fill(t.title_suffix(), &[&text]) text=t.home_title()/>
        <Router>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    mode.0.await.ok().and_then(|m| words::dev_warning(t, m)).map(|words| view! {
                        <p class="dev-strip" role="note" data-testid="dev-mode">{words}</p>
                    })
                })}
            </Transition>
            <header class="site-header" data-testid="site-header" data-hydrated="false">
                <A href="/" attr:class="brand">{t.brand()}</A>
                <nav aria-label=t.nav_label()>
                    <A href="/">{t.nav_vouchers()}</A>
                    <Transition fallback=|| ()>
                        {move || Suspend::new(async move {
                            let me = session.me.await.ok().flatten();
                            view! { <UserNav me/> }
                        })}
                    </Transition>
                </nav>
                <LanguageSwitch/>
            </header>
            <main>
                // Async: the server sends whole pages, so they work without JavaScript (the
                // streamed kind needs a script to fill its Suspense holes) and a 403 or 404
                // status is set before the headers leave.
                <Routes fallback=|| view! { <pages::NotFound/> }>
                    <Route path=path!("/") ssr=SsrMode::Async view=pages::home::HomePage/>
                    <Route path=path!("/login") ssr=SsrMode::Async view=pages::login::LoginPage/>
                    <Route path=path!("/vouchers/:id") ssr=SsrMode::Async view=pages::voucher::VoucherPage/>
                    <Route path=path!("/vouchers/:id/draw") ssr=SsrMode::Async view=pages::draw_check::DrawCheckPage/>
                    <Route path=path!("/orders") ssr=SsrMode::Async view=pages::orders::MyOrdersPage/>
                    <Route path=path!("/orders/:id") ssr=SsrMode::Async view=pages::orders::OrderPage/>
                    <Route path=path!("/admin") ssr=SsrMode::Async view=pages::console::ConsolePage/>
                    <Route path=path!("/admin/vouchers/new") ssr=SsrMode::Async view=pages::admin::NewVoucherPage/>
                    <Route path=path!("/admin/vouchers/:id/edit") ssr=SsrMode::Async view=pages::admin::EditVoucherPage/>
                    <Route path=path!("/admin/payments") ssr=SsrMode::Async view=pages::payments::PaymentsPage/>
                    <Route path=path!("/admin/actions") ssr=SsrMode::Async view=pages::actions::ActionsPage/>
                </Routes>
            </main>
            <footer class="site-footer">
                <time::ZoneNote/>
            </footer>
            <HydrationMark/>
        </Router>
    }
}

/// The last island of every page: the islands are hydrated in the order of the page, so once
/// this one is, every island above it is live, and it says so on the site header
/// (`data-hydrated="true"`, what tests and the phone measure wait for).
#[island]
fn HydrationMark() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    if let Some(header) = document()
        .query_selector("[data-testid=site-header]")
        .ok()
        .flatten()
    {
        let _ = header.set_attribute("data-hydrated", "true");
    }
}

/// The header's links for the visitor: sign in, or their orders, the console for admins, and
/// sign out.
#[component]
fn UserNav(me: Option<wire::Me>) -> impl IntoView {
    let t = words::t();
    let Some(me) = me else {
        return view! { <A href="/login">{t.nav_sign_in()}</A> }.into_any();
    };
    // A plain form: the server signs out and sends the visitor home.
    let sign_out = ServerAction::<api::auth::SignOut>::new();
    view! {
        <A href="/orders">{t.nav_my_orders()}</A>
        {me.is_admin.then(|| view! { <A href="/admin">{t.nav_console()}</A> })}
        <ActionForm action=sign_out attr:class="sign-out">
            <span class="who" data-testid="signed-in-as">{me.phone.to_string()}</span>
            <button type="submit" class="link" data-testid="sign-out">{t.nav_sign_out()}</button>
        </ActionForm>
    }
    .into_any()
}

/// Links to this page in the other language: a plain link to `/lang`, which remembers the
/// choice in a cookie and comes back here (no JavaScript needed).
#[component]
fn LanguageSwitch() -> impl IntoView {
    let here = words::lang();
    let next = url::current_path_and_query();
    view! {
        <nav class="lang-switch" aria-label=words::t().lang_switch_label() data-testid="lang-switch">
            {words::Lang::ALL
                .into_iter()
                .filter(|l| *l != here)
                .map(|l| view! {
                    <a href=url::language_switch(l, &next) hreflang=l.tag() lang=l.tag()
                        rel="alternate" data-testid=format!("lang-{}", l.tag())>{l.own_name()}</a>
                })
                .collect_view()}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::{bundle_name, page_bundle, set_bundle};

    #[test]
    fn a_page_bundle_keeps_the_hash_of_the_shoppers() {
        assert_eq!(
            bundle_name("seckill.0123456789abcdef", "admin"),
            "seckill-admin.0123456789abcdef"
        );
        assert_eq!(bundle_name("seckill", "sale"), "seckill-sale");
    }

    #[test]
    fn each_page_names_its_bundle() {
        assert_eq!(page_bundle("/"), Some("home"));
        assert_eq!(page_bundle("/vouchers/42"), Some("sale"));
        assert_eq!(page_bundle("/admin"), Some("admin"));
        assert_eq!(page_bundle("/admin/vouchers/new"), Some("admin"));
        for whole in [
            "/login",
            "/orders",
            "/orders/7",
            "/administrator",
            "/vouchers",
            "/nope",
        ] {
            assert_eq!(page_bundle(whole), None, "{whole}");
        }
        // A set the server names is no path: no address loads its bundle.
        assert_eq!(set_bundle("draw-sales"), Some("draw"));
        assert_eq!(page_bundle("draw-sales"), None);
        assert_eq!(set_bundle("/vouchers/"), None);
    }
}
