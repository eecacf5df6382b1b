//! Stand-ins for the services on the internet the shop speaks to, for tests on a machine that
//! reaches none of them. Each speaks the service's documented wire protocol on loopback (its
//! paths, form bodies, JSON answers, signatures and status codes), so the shop's own client and
//! checks are what the tests exercise; none is a mock of the shop's own traits.
//!
//! - [`stripe::FakeStripe`]: Stripe Checkout's API, its hosted payment page, and its signed
//!   webhooks (`fake-stripe` runs it as a process for the browser journeys).
//! - [`drand::FakeDrand`]: a drand randomness beacon's HTTP API, its rounds signed with a real
//!   BLS key as drand's unchained schemes sign them.
//! - [`tsa::FakeTsa`]: an RFC 3161 timestamping authority over HTTP, its tokens made and signed
//!   by OpenSSL's own authority (`openssl ts -reply`).

pub mod drand;
pub mod stripe;
pub mod tsa;

/// Logs of a stand-in run as a process (`fake-stripe`, `fake-drand`): `RUST_LOG`, else `info`,
/// to standard error (standard output is the process's answer to whoever started it).
pub fn init_logs() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
}
