//! One module per page.

pub mod admin;
pub mod console;
pub mod draw_check;
pub mod home;
pub mod login;
pub mod orders;
pub mod payments;
pub mod voucher;

use leptos::prelude::*;

/// Any unknown path.
#[component]
pub fn NotFound() -> impl IntoView {
    crate::components::set_page_status(404);
    view! {
        <leptos_meta::Title text="Page not found"/>
        <section class="panel" data-testid="not-found">
            <h1>"Page not found"</h1>
            <p><a href="/">"Back to the vouchers"</a></p>
        </section>
    }
}
