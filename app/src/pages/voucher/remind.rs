//! "Remind me" on an upcoming sale's page (issue #56): how many wait, and a plain form to ask for
//! a text or take it back (the server answers it and sends the browser back here, with
//! JavaScript or without; not an island, so the sale's bundle does not grow); a visitor is sent
//! to sign in and back.

use leptos::prelude::*;

use crate::{
    api::reminders::{MyReminder, RemindersView},
    components::{plain_form_error, ErrorNote},
    time::shop_time,
    url::sign_in_path,
    words::{fill, t},
};

#[component]
pub fn RemindMe(id: i64, facts: RemindersView, signed_in: bool) -> impl IntoView {
    let t = t();
    let page = format!("/vouchers/{id}");
    let action = match (signed_in, facts.mine) {
        (false, _) => view! {
            <a class="button" href=sign_in_path(&page) data-testid="remind-sign-in">{t.remind_sign_in()}</a>
        }
        .into_any(),
        (true, None) => view! {
            <form method="post" action="/sf/remind_me">
                <input type="hidden" name="voucher_id" value=id/>
                <button type="submit" class="button" data-testid="remind-me">{t.remind_me()}</button>
            </form>
        }
        .into_any(),
        (true, Some(mine @ (MyReminder::Waiting(_) | MyReminder::Due))) => view! {
            <p class="notice" role="status" data-testid="reminder-set">{match mine {
                MyReminder::Waiting(at) => fill(t.remind_set(), &[&shop_time(at)]),
                _ => t.remind_due().to_owned(),
            }}</p>
            <form method="post" action="/sf/cancel_reminder">
                <input type="hidden" name="voucher_id" value=id/>
                <button type="submit" class="button" data-testid="remind-cancel">{t.remind_cancel()}</button>
            </form>
        }
        .into_any(),
        // Gone, going or given up: nothing to take back, and asking again would send nothing.
        (true, Some(done)) => {
            let (words, state) = match done {
                MyReminder::Sending => (t.remind_sending(), "sending"),
                MyReminder::Sent => (t.remind_sent(), "sent"),
                _ => (t.remind_failed(), "failed"),
            };
            view! {
                <p class="notice" role="status" data-testid="reminder-done" data-state=state>{words}</p>
            }
            .into_any()
        }
    };
    // A post the server refused (the sale opened meanwhile, a store out of reach) comes back
    // here with its error in the address: said, not dropped.
    let refused =
        plain_form_error("/sf/remind_me").or_else(|| plain_form_error("/sf/cancel_reminder"));
    view! {
        <section class="panel remind" data-testid="remind">
            <p data-testid="remind-waiting">{fill(t.remind_waiting(), &[&domain::grouped(facts.waiting)])}</p>
            <p class="hint">{t.remind_hint()}</p>
            {refused.map(|error| view! { <ErrorNote error/> })}
            {action}
        </section>
    }
}
