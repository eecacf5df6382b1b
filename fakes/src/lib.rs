//! Stand-ins for the services on the internet the shop speaks to, for tests on a machine that
//! reaches none of them. Each speaks the service's documented wire protocol on loopback (its
//! paths, form bodies, JSON answers, signatures and status codes), so the shop's own client and
//! checks are what the tests exercise; none is a mock of the shop's own traits.
//!
//! - [`stripe::FakeStripe`]: Stripe Checkout's API, its hosted payment page, and its signed
//!   webhooks (`fake-stripe` runs it as a process for the browser journeys).
//! - [`drand::FakeDrand`]: a drand randomness beacon's HTTP API, its rounds signed with a real
//!   BLS key as drand's unchained schemes sign them.

pub mod drand;
pub mod stripe;
