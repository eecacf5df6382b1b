//! `/admin/actions`: what the admins did (issue #55), read from the `admin_actions` table the
//! actions are written to: who, what, to what, when, and how it ended, newest first, 50 to a
//! page (`?before=` the last one shown). Rendered on the server; links only, so the same page
//! with JavaScript or without.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use webapi::actions::{ActionView, ActionsView};

use crate::{
    api::admin::admin_actions, components::ErrorNote, session::AdminOnly, time::When, words::Texts,
};

#[component]
pub fn ActionsPage() -> impl IntoView {
    view! { <AdminOnly><Actions/></AdminOnly> }
}

/// An action's name in words (an unknown one as recorded).
fn action_words(t: Texts, action: &str) -> String {
    match action {
        "create voucher" => t.act_create_voucher(),
        "edit voucher" => t.act_edit_voucher(),
        "end sale" => t.act_end_sale(),
        "add stock" => t.act_add_stock(),
        "refund order" => t.act_refund_order(),
        "export orders" => t.act_export_orders(),
        "export payments" => t.act_export_payments(),
        other => return other.to_owned(),
    }
    .to_owned()
}

#[component]
fn Actions() -> impl IntoView {
    let t = crate::words::t();
    let query = use_query_map();
    let before = query.with_untracked(|q| q.get("before").and_then(|b| b.parse::<i64>().ok()));
    let data = Resource::new(move || before, admin_actions);
    view! {
        <leptos_meta::Title text=t.actions_title()/>
        <div class="console-head">
            <h1>{t.actions_title()}</h1>
            <a class="button" href="/admin">{t.console_title()}</a>
        </div>
        <Suspense fallback=move || view! { <p class="loading">{t.actions_loading()}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(view) => view! { <Listing view newest=before.is_some()/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Listing(view: ActionsView, newest: bool) -> impl IntoView {
    let t = crate::words::t();
    let ActionsView { actions, next } = view;
    let body = if actions.is_empty() {
        view! { <p class="empty" data-testid="no-actions">{t.actions_empty()}</p> }.into_any()
    } else {
        view! {
            <div class="table-wrap">
            <table class="counts" data-testid="actions">
                <thead>
                    <tr>
                        <th scope="col">{t.actions_col_when()}</th>
                        <th scope="col">{t.actions_col_admin()}</th>
                        <th scope="col">{t.actions_col_action()}</th>
                        <th scope="col">{t.actions_col_target()}</th>
                        <th scope="col">{t.actions_col_outcome()}</th>
                    </tr>
                </thead>
                <tbody>{actions.into_iter().map(|a| view! { <Row a/> }).collect_view()}</tbody>
            </table>
            </div>
        }
        .into_any()
    };
    view! {
        {body}
        <nav class="pager" aria-label=t.actions_title()>
            {newest.then(|| view! { <a href="/admin/actions" data-testid="actions-newest">{t.actions_newest()}</a> })}
            {next.map(|n| view! {
                <a href=format!("/admin/actions?before={n}") data-testid="actions-older">{t.actions_older()}</a>
            })}
        </nav>
    }
}

#[component]
fn Row(a: ActionView) -> impl IntoView {
    let t = crate::words::t();
    // A refusal in the reader's language by its code; a row from before codes were recorded
    // keeps its words.
    let refusal = a
        .code
        .as_deref()
        .and_then(webapi::error::AppError::of_recorded_refusal)
        .map(|e| e.message(crate::words::lang()))
        .or_else(|| a.refusal.clone())
        .unwrap_or_default();
    let outcome = match a.outcome.as_str() {
        "refused" => crate::words::fill(t.actions_refused(), &[&refusal]),
        "failed" => t.actions_failed().to_owned(),
        _ => t.actions_done().to_owned(),
    };
    view! {
        <tr data-testid="action-row" data-action=a.action.clone() data-outcome=a.outcome.clone()>
            <td data-label=t.actions_col_when()><When at=a.at/></td>
            <td data-label=t.actions_col_admin()>{a.actor_phone}</td>
            <td data-label=t.actions_col_action()>{action_words(t, &a.action)}</td>
            <td data-label=t.actions_col_target()>{a.target}</td>
            <td data-label=t.actions_col_outcome()>{outcome}</td>
        </tr>
    }
}
