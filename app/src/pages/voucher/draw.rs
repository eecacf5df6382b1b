//! A draw sale's panel: "Enter the draw" while entries are open, "You're in the draw" until
//! it runs, then "You won" with the order, or "Not this time" with the place in line (a unit
//! that comes back goes to the next in line). Without JavaScript the button is a plain form and
//! the page refreshes itself around the draw; with it, the standing is asked for again once the
//! draw's time has passed, until it is decided.

// Compiled in every bundle, used only where the panel is carried.
#![cfg_attr(not(island_draw_panel), allow(dead_code, unused_imports))]

use std::time::Duration;

use domain::{EntryState, VoucherStatus};
use leptos::{either::EitherOf6, prelude::*, server_fn::ServerFn};
use webapi::answers::Entered;

use super::{
    buying::{BuyPanel, HeldPay, Purchase},
    live::LiveSale,
};
use crate::{
    api::draw::EnterDraw,
    components::{form_call, CallForm, ErrorNote},
    refusal::Refusal,
    rest,
    time::{every, When},
    url::sign_in_path,
    wire::{EntryView, ReceiptView},
    words::{fill, t},
};

/// How often the standing is asked for after the draw's time, until decided.
const AFTER_DRAW: Duration = Duration::from_secs(1);

/// A draw sale's panel, in the bundles that carry it (`draw_panel` in `bundles.txt`): the
/// server and `seckill-draw`, which a draw sale's page loads (decision 54).
#[cfg(island_draw_panel)]
pub(super) fn panel(
    sale: LiveSale,
    purchase: Purchase,
    entry: EntryView,
    signed_in: bool,
) -> impl IntoView {
    view! { <DrawPanel sale purchase entry signed_in/> }
}

/// The first-come bundle has no draw panel: a draw sale's page never loads it (the server
/// names the draw's for it), so this renders nothing. A page rendered as a draw before the
/// bundle was chosen for it cannot be: both come from one request.
#[cfg(not(island_draw_panel))]
pub(super) fn panel(_: LiveSale, _: Purchase, _: Standing, _: bool) -> impl IntoView {}

/// A draw's standing as the sale island's props carry it: read where the panel is.
#[cfg(island_draw_panel)]
pub type Standing = EntryView;

/// The standing the page read, as the island's props carry it.
pub fn standing(entry: EntryView) -> Standing {
    #[cfg(island_draw_panel)]
    {
        entry
    }
    #[cfg(not(island_draw_panel))]
    {
        let _ = entry;
        Standing
    }
}

/// A draw's standing as the sale island's props carry it: skipped unread where the panel is
/// not (a first-come sale's page has none), so the first-come bundle carries no reader of a
/// draw's receipt, proof or rank.
#[cfg(not(island_draw_panel))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing;

#[cfg(not(island_draw_panel))]
impl<'de> serde::Deserialize<'de> for Standing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Self)
    }
}

#[cfg(not(island_draw_panel))]
impl serde::Serialize for Standing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

#[component]
fn DrawPanel(
    sale: LiveSale,
    purchase: Purchase,
    entry: EntryView,
    signed_in: bool,
) -> impl IntoView {
    let id = sale.voucher.read_untracked().id;
    let opening = sale.voucher.read_untracked().opening;
    let entries_open_at = opening.entries_open_at().unwrap_or(entry.draw_at);
    let draw_at = entry.draw_at;
    sale.entrants.set(entry.entrants);
    let standing = RwSignal::new(entry);
    // Enters (`POST …/entries`): the answer is the shopper's signed receipt and the entrants so
    // far, which make the standing "entered" (one round trip; the rest is the page's).
    let enter = form_call(<EnterDraw as ServerFn>::PATH, move || async move {
        let path = format!("/api/vouchers/{id}/entries");
        let entered: Entered = rest::post(&path).await?;
        Ok(EntryView {
            state: EntryState::Entered,
            receipt: Some(entered.receipt),
            entrants: entered.entrants,
            ..standing.get_untracked()
        })
    });
    Effect::new(move |_| {
        if let Some(Ok(e)) = enter.value().get() {
            // Entrants only grow until the draw: a push that already counted this entry may
            // have come first, and the larger figure is the newer.
            sale.entrants.update(|n| *n = (*n).max(e.entrants));
            standing.set(e);
        }
    });
    // After the draw's time, ask until the standing is decided and a win names its order (a
    // minute at most).
    let asked = StoredValue::new(0_u32);
    every(AFTER_DRAW, move || {
        // Undecided, or won before the winner's order is known (it is being admitted).
        let undecided = standing.with_untracked(|s| {
            s.state == EntryState::Entered || (s.state == EntryState::Won && s.order_id.is_none())
        });
        if !undecided || sale.now.get_untracked() < draw_at || asked.get_value() >= 60 {
            return;
        }
        asked.update_value(|n| *n += 1);
        leptos::task::spawn_local(async move {
            if let Ok(s) = standing_now(id).await {
                if let (EntryState::Won, Some(order)) = (s.state, s.order_id) {
                    if purchase.held.get_untracked().is_none() {
                        purchase.hold(order);
                    }
                }
                standing.set(s);
            }
        });
    });
    let entrants = move || domain::grouped(sale.entrants.get());
    // Memos, so the panel changes when these flip, not at every tick of the clock.
    let drawn = Memo::new(move |_| sale.now.get() >= draw_at);
    let entries_open = Memo::new(move |_| sale.now.get() >= entries_open_at);
    let t = t();
    view! {
        <div class="draw" data-testid="draw" data-state=move || standing.with(|s| state_name(s.state))>
            <dl class="facts">
                <dt>{t.draw_entries_open()}</dt>
                <dd><When at=entries_open_at/></dd>
                <dt>{t.draw_draw()}</dt>
                <dd><When at=draw_at/></dd>
                <dt>{t.draw_entered_count()}</dt>
                <dd data-testid="entrants">{entrants}</dd>
            </dl>
            {move || {
                let s = standing.get();
                let now = sale.now.get_untracked();
                match s.state {
                    EntryState::Entered => EitherOf6::A(view! {
                        <p class="entered" data-testid="entered">
                            {move || fill(t.draw_in_the_draw(), &[&entrants()])} <When at=draw_at/>
                        </p>
                        <ReceiptNote voucher=id receipt=s.receipt.clone()/>
                        <Refresh at=(!drawn.get()).then(|| (draw_at - now).num_seconds() + 1)/>
                    }),
                    EntryState::Won => EitherOf6::B(view! {
                        <p class="won" data-testid="won">
                            {t.draw_you_won()}
                            {s.order_id.map(|o| view! {
                                <a href=format!("/orders/{o}") data-testid="won-order-link"><code>{o.to_string()}</code></a>
                            })}
                            // "Pay below" only while the order waits for its payment (not a
                            // free one, nor one cancelled since).
                            {move || match purchase.held.get().and_then(|(_, status)| status.pay_by()) {
                                Some(_) => t.draw_pay_from_order(),
                                None => t.draw_see_order(),
                            }}
                        </p>
                        {move || purchase.held.get().and_then(|(order_id, status)| {
                            status.pay_by().map(|pay_by| view! { <HeldPay order_id pay_by now=sale.now/> })
                        })}
                        <ReceiptNote voucher=id receipt=s.receipt.clone()/>
                    }),
                    EntryState::Lost => EitherOf6::C(view! {
                        // Ranked: lost this draw. Unranked: no draw ran (the sale ended
                        // before it), which is no loss to be sorry for.
                        <p class="lost" data-testid="lost">
                            {s.rank.is_some().then_some(t.draw_not_this_time())}
                            {match s.rank {
                                Some(r) => fill(t.draw_in_line(), &[&r]),
                                None => t.draw_ended_before().to_owned(),
                            }}
                        </p>
                        <ReceiptNote voucher=id receipt=s.receipt.clone()/>
                        <p><a href=format!("/vouchers/{id}/draw") data-testid="check-draw">{t.draw_check()}</a></p>
                    }),
                    EntryState::None if drawn.get() => EitherOf6::D(view! {
                        <BuyPanel sale purchase signed_in/>
                    }),
                    EntryState::None if !signed_in => EitherOf6::E(view! {
                        <p class="buy-form">
                            <a class="button primary" data-testid="sign-in-to-enter"
                                href=sign_in_path(&format!("/vouchers/{id}"))>{t.draw_sign_in_to_enter()}</a>
                        </p>
                    }),
                    EntryState::None => EitherOf6::F(view! {
                        <CallForm to={<EnterDraw as ServerFn>::PATH} send=move || { enter.dispatch(()); } class="buy-form">
                            <input type="hidden" name="voucher_id" value=id.get()/>
                            <button type="submit" class="primary buy" data-testid="enter-draw"
                                disabled=move || !entries_open.get() || enter.pending().get()>
                                {move || if entries_open.get() { t.draw_enter() } else { t.draw_not_open() }}
                            </button>
                        </CallForm>
                        {(!entries_open.get()).then(|| view! { <Refresh at=Some((entries_open_at - now).num_seconds() + 1)/> })}
                    }),
                }
            }}
            {move || enter.value().get().and_then(Result::err).map(|e| {
                let code = e.code();
                view! { <div data-testid="enter-error" data-code=code><ErrorNote error=e/></div> }
            })}
            <p class="hint">
                {move || (sale.phase.get() == VoucherStatus::Upcoming).then_some(t.draw_hint())}
            </p>
        </div>
    }
}

/// The shopper's receipt: the leaf that stands for them in the published list (the whole
/// receipt, signed by the shop, is their proof of entry).
#[component]
fn ReceiptNote(voucher: domain::VoucherId, receipt: Option<ReceiptView>) -> impl IntoView {
    let t = t();
    receipt.map(|r| {
        view! {
            <p class="tag">
                {t.draw_your_entry()} <code data-testid="draw-leaf" title=r.leaf.clone()>{r.leaf[..16.min(r.leaf.len())].to_owned()}</code>
                " · " <a href=format!("/api/vouchers/{voucher}/entries/me") data-testid="receipt-link">{t.draw_your_receipt()}</a>
            </p>
        }
    })
}

/// Without JavaScript, the page reloads itself when the draw (or entries) is due within ten
/// minutes, or every few seconds once it is past and undecided.
#[component]
fn Refresh(at: Option<i64>) -> impl IntoView {
    let secs = match at {
        Some(s) if s <= 600 => s.max(1),
        Some(_) => return None,
        None => 3,
    };
    Some(view! {
        <noscript inner_html=format!(r#"<meta http-equiv="refresh" content="{secs}">"#)></noscript>
    })
}

fn state_name(state: EntryState) -> &'static str {
    match state {
        EntryState::None => "none",
        EntryState::Entered => "entered",
        EntryState::Won => "won",
        EntryState::Lost => "lost",
    }
}

/// The signed-in shopper's standing in `voucher`'s draw.
async fn standing_now(voucher: domain::VoucherId) -> Result<EntryView, Refusal> {
    rest::get(&format!("/api/vouchers/{voucher}/entries/me")).await
}
