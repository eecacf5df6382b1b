//! The seckill UI: one Leptos app rendered on the server (`ssr`) and hydrated in the browser
//! (`hydrate`). Server functions live next to the components that call them and are thin
//! adapters over the core library (`seckill`), which only the `ssr` build links.

pub mod api;
pub mod error;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod ssr;
pub mod wire;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    path,
};

/// The HTML document around the app (server-rendered only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="data:,"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Effects run only in the browser: this attribute tells tests the wasm is live.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    view! {
        <Stylesheet id="leptos" href="/pkg/seckill.css"/>
        <Title text="Seckill: flash sales"/>
        <Router>
            <header class="site-header" data-testid="site-header" data-hydrated=move || hydrated.get().to_string()>
                <A href="/" attr:class="brand">"秒杀 Seckill"</A>
                <nav>
                    <A href="/">"Vouchers"</A>
                    <A href="/admin/vouchers/new">"New voucher"</A>
                    <A href="/login">"Sign in"</A>
                </nav>
            </header>
            <main>
                <Routes fallback=|| view! { <pages::NotFound/> }>
                    <Route path=path!("/") view=pages::home::HomePage/>
                    <Route path=path!("/login") view=pages::login::LoginPage/>
                    <Route path=path!("/vouchers/:id") view=pages::voucher::VoucherPage/>
                    <Route path=path!("/admin/vouchers/new") view=pages::admin::NewVoucherPage/>
                </Routes>
            </main>
        </Router>
    }
}
