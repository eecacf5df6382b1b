//! The manage panel (`/admin?manage={id}`): end a sale now, or add stock to it; before it opens,
//! a link to edit it.

use domain::VoucherId;
use leptos::prelude::*;

use crate::{
    api::{
        admin::{AddStock, EndSale},
        catalog::get_voucher,
    },
    components::ErrorNote,
    error::AppError,
    pages::home::StatusBadge,
    time::When,
    url::ManageDone,
    wire::{VoucherDetail, VoucherView},
};

/// End a sale now, or add stock to it: each behind a disclosure that asks for confirmation
/// (plain forms without JavaScript; the server sends them back here, `done` saying what was
/// done). An island: with JavaScript the forms answer in place and the figures are read again.
#[cfg_attr(island_manage, island)]
#[cfg_attr(not(island_manage), component)]
pub fn ManageSale(
    id: VoucherId,
    voucher: Result<VoucherDetail, AppError>,
    done: Option<ManageDone>,
) -> impl IntoView {
    let t = crate::words::t();
    let voucher = RwSignal::new(voucher);
    let end = ServerAction::<EndSale>::new();
    let add = ServerAction::<AddStock>::new();
    Effect::new(move |_| {
        if matches!(end.value().get(), Some(Ok(_))) || matches!(add.value().get(), Some(Ok(_))) {
            leptos::task::spawn_local(async move {
                if let Ok(d) = get_voucher(id.get()).await {
                    voucher.try_set(Ok(d));
                }
            });
        }
    });
    let notice = move || {
        let ended = matches!(end.value().get(), Some(Ok(()))) || done == Some(ManageDone::Ended);
        let added = matches!(add.value().get(), Some(Ok(_))) || done == Some(ManageDone::Added);
        if ended {
            Some(t.manage_ended())
        } else if added {
            Some(t.manage_added())
        } else if done == Some(ManageDone::Edited) {
            Some(t.manage_edited())
        } else {
            None
        }
    };
    let error = move || match (end.value().get(), add.value().get()) {
        (Some(Err(e)), _) | (_, Some(Err(e))) => Some(e),
        _ => None,
    };
    view! {
        <section class="panel manage" id="manage" data-testid="manage" data-voucher=id.get()>
            {move || match voucher.get() {
                Ok(d) => view! { <SaleActions voucher=d.voucher server_time=d.server_time end add/> }.into_any(),
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
            }}
            <div aria-live="polite">
                {move || notice().map(|n| view! { <p class="notice" role="status" data-testid="manage-notice">{n}</p> })}
                {move || error().map(|e| {
                    let code = e.code();
                    view! { <div data-testid="manage-error" data-code=code><ErrorNote error=e/></div> }
                })}
            </div>
        </section>
    }
}

/// What the panel offers for `voucher`: its figures, then (unless it has ended) {t.manage_end()} and
/// {t.manage_add()}, each behind a disclosure that asks for confirmation.
#[component]
fn SaleActions(
    voucher: VoucherView,
    server_time: chrono::DateTime<chrono::Utc>,
    end: ServerAction<EndSale>,
    add: ServerAction<AddStock>,
) -> impl IntoView {
    let t = crate::words::t();
    let v = voucher;
    let id = v.id.get();
    let ended = v.status == domain::VoucherStatus::Ended;
    // Editable until it opens to shoppers (the server says the last word).
    let editable = v.status == domain::VoucherStatus::Upcoming
        && v.opening
            .entries_open_at()
            .is_none_or(|at| server_time < at);
    // One key per sale and reading of it (the server's time of the figures shown): a resent
    // form adds nothing more, and every addition after it is read again has a key of its own.
    // (Keyed by the offered total, an edit that brought the total back to an earlier one made
    // the next addition's key an old one: nothing was added, and the panel said it was.)
    let key = format!("console-{}-{}", v.id, server_time.timestamp_millis());
    view! {
        <h2>{crate::words::fill(t.manage_title(), &[&v.title])}</h2>
        <p>
            <StatusBadge status=v.status/> " "
            {crate::words::fill(t.manage_left(), &[&domain::grouped(v.remaining), &domain::grouped(v.stock)])}
            <When at=v.window.ends_at()/>
        </p>
        {editable.then(|| view! {
            <p><a href=format!("/admin/vouchers/{id}/edit") data-testid="edit-sale">{t.manage_edit()}</a></p>
        })}
        {(!ended).then(|| view! {
            <details data-testid="end-sale">
                <summary>{t.manage_end()}</summary>
                <p>{t.manage_end_text()}</p>
                <ActionForm action=end>
                    <input type="hidden" name="voucher_id" value=id/>
                    <button type="submit" class="danger" data-testid="confirm-end" disabled=move || end.pending().get()>
                        {t.manage_end_now()}
                    </button>
                </ActionForm>
            </details>
            <details data-testid="add-stock">
                <summary>{t.manage_add()}</summary>
                <ActionForm action=add>
                    <input type="hidden" name="voucher_id" value=id/>
                    <input type="hidden" name="key" value=key/>
                    <label for="add-units">{t.manage_units()}</label>
                    <input id="add-units" name="add" type="number" min="1" step="1" required data-testid="add-units"/>
                    <button type="submit" class="primary" data-testid="confirm-add" disabled=move || add.pending().get()>
                        {t.manage_add_now()}
                    </button>
                </ActionForm>
            </details>
        })}
    }
}
