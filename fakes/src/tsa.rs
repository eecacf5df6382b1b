//! A stand-in RFC 3161 timestamping authority, speaking the protocol's HTTP transport
//! (RFC 3161 §3.4): `POST /` with `Content-Type: application/timestamp-query` and a DER
//! `TimeStampReq`, answered `200` with `application/timestamp-reply` and a DER `TimeStampResp`.
//!
//! The replies are OpenSSL's own authority's (`openssl ts -reply`), signed with a P-256 key whose
//! self-signed certificate (critical `extendedKeyUsage=timeStamping`) this stand-in makes when it
//! starts: real tokens, which `openssl ts -verify -CAfile` accepts with [`FakeTsa::certificate`]
//! and refuses with any other. A query OpenSSL will not timestamp (a digest other than SHA-256)
//! is answered with a `rejection` status, as an authority does. [`FakeTsa::outage`] answers 503.

use std::{
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
};

use anyhow::{bail, Context};
use axum::{
    body::Bytes,
    extract::State,
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
    Router,
};

/// The policy OID the stand-in's tokens name (a private arc: not a real authority's).
const POLICY: &str = "1.3.6.1.4.1.59999.1";

struct Authority {
    dir: PathBuf,
    outage: AtomicBool,
    served: AtomicU64,
    /// Names each query's files apart.
    next: AtomicU64,
}

/// The stand-in, serving until dropped (its key and certificate are removed then).
pub struct FakeTsa {
    authority: Arc<Authority>,
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeTsa {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.authority.dir);
    }
}

async fn openssl(args: &[&str], dir: &Path) -> anyhow::Result<()> {
    let out = tokio::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .await
        .context("running openssl (the stand-in authority is OpenSSL's own)")?;
    if !out.status.success() {
        bail!(
            "openssl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

impl FakeTsa {
    /// A new authority (key, certificate, serial file) on a free loopback port.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_on(0).await
    }

    /// Like [`FakeTsa::start`], on 127.0.0.1:`port` (0: a free one).
    pub async fn start_on(port: u16) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!(
            "seckill-fake-tsa-{}-{}",
            std::process::id(),
            uuid_like()
        ));
        std::fs::create_dir_all(&dir)?;
        openssl(
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-keyout",
                "key.pem",
                "-out",
                "cert.pem",
                "-days",
                "3650",
                "-nodes",
                "-subj",
                "/CN=seckill stand-in timestamping authority",
                "-addext",
                "extendedKeyUsage=critical,timeStamping",
                "-addext",
                "keyUsage=critical,digitalSignature",
                "-addext",
                "basicConstraints=critical,CA:FALSE",
            ],
            &dir,
        )
        .await?;
        std::fs::write(dir.join("serial"), "01\n")?;
        std::fs::write(
            dir.join("tsa.cnf"),
            format!(
                "[ tsa ]\ndefault_tsa = tsa_config\n[ tsa_config ]\nserial = ./serial\n\
                 crypto_device = builtin\nsigner_digest = sha256\ndefault_policy = {POLICY}\n\
                 other_policies = {POLICY}\ndigests = sha256\naccuracy = secs:1\nordering = no\n\
                 tsa_name = no\ness_cert_id_chain = no\ness_cert_id_alg = sha256\n\
                 certs = ./cert.pem\n"
            ),
        )?;
        let authority = Arc::new(Authority {
            dir,
            outage: AtomicBool::new(false),
            served: AtomicU64::new(0),
            next: AtomicU64::new(0),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let url = format!("http://{}/", listener.local_addr()?);
        let app = Router::new()
            .route("/", post(timestamp))
            .with_state(Arc::clone(&authority));
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the fake timestamping authority stopped");
            }
        });
        Ok(Self {
            authority,
            url,
            task,
        })
    }

    /// Where to send queries.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The authority's certificate (PEM): what a skeptic pins to check its tokens.
    pub fn certificate(&self) -> PathBuf {
        self.authority.dir.join("cert.pem")
    }

    /// While on, every query is answered `503 Service Unavailable`.
    pub fn outage(&self, on: bool) {
        self.authority.outage.store(on, Ordering::SeqCst);
    }

    /// Timestamps granted or refused so far (503s not counted).
    pub fn served(&self) -> u64 {
        self.authority.served.load(Ordering::SeqCst)
    }
}

/// A name unique enough for a temporary directory.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}")
}

async fn timestamp(
    State(authority): State<Arc<Authority>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if authority.outage.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance").into_response();
    }
    let typed = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("application/timestamp-query"));
    if !typed {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "expected application/timestamp-query",
        )
            .into_response();
    }
    if body.is_empty() || body.len() > 4096 {
        return (StatusCode::BAD_REQUEST, "not a timestamp query").into_response();
    }
    let n = authority.next.fetch_add(1, Ordering::SeqCst);
    let (query, reply) = (format!("q{n}.tsq"), format!("r{n}.tsr"));
    let dir = &authority.dir;
    let answered = async {
        tokio::fs::write(dir.join(&query), &body).await?;
        openssl(
            &[
                "ts",
                "-reply",
                "-config",
                "tsa.cnf",
                "-queryfile",
                &query,
                "-signer",
                "cert.pem",
                "-inkey",
                "key.pem",
                "-out",
                &reply,
            ],
            dir,
        )
        .await?;
        anyhow::Ok(tokio::fs::read(dir.join(&reply)).await?)
    }
    .await;
    let _ = tokio::fs::remove_file(dir.join(&query)).await;
    let _ = tokio::fs::remove_file(dir.join(&reply)).await;
    match answered {
        Ok(der) => {
            authority.served.fetch_add(1, Ordering::SeqCst);
            ([(header::CONTENT_TYPE, "application/timestamp-reply")], der).into_response()
        }
        // Bytes OpenSSL cannot read as a query at all.
        Err(e) => (
            StatusCode::BAD_REQUEST,
            format!("not a timestamp query: {e}"),
        )
            .into_response(),
    }
}
