//! A provider over HTTPS, as `bridle models` meets one: the server's certificate is checked
//! against the system's roots (rustls with the platform verifier; `SSL_CERT_FILE` names the roots
//! here, as it does for OpenSSL), so a server signed by a CA the system trusts is reached and one
//! it does not is refused before any request is sent. The server is `openssl s_server`.

use std::path::Path;
use std::process::Stdio;

use super::bridle::*;

/// `openssl` with `args` in `dir`; panics with its output when it fails.
fn openssl(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (scripts/setup-system.sh)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A CA, and a certificate for 127.0.0.1 it signed, in `dir`.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=Bridle test CA",
        ],
    );
    openssl(
        dir,
        &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
}

#[tokio::test]
async fn an_https_provider_is_reached_only_with_a_certificate_the_system_trusts() {
    let dir = tempfile::tempdir().unwrap();
    certificates(dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let accept = format!("127.0.0.1:{port}");
    let mut server = tokio::process::Command::new("openssl")
        .args(["s_server", "-accept", &accept, "-cert", "leaf.pem", "-key", "leaf.key", "-www", "-quiet"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let up = std::time::Instant::now();
    while tokio::net::TcpStream::connect(&accept).await.is_err() {
        assert!(up.elapsed().as_secs() < 20, "openssl s_server did not listen on {accept}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let dirs = Dirs::new();
    let base = format!("https://{accept}/v1");
    let args = ["models", "--provider", "openai", "--base-url", &base];

    let models = |roots: Option<&Path>| {
        let mut run = command(&dirs.data, &dirs.workspace, &args);
        run.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR").stdin(Stdio::null());
        if let Some(file) = roots {
            run.env("SSL_CERT_FILE", file);
        }
        run.output()
    };

    // The system's own roots do not hold the test CA: refused at the handshake.
    let refused = models(None).await.unwrap();
    assert_ne!(refused.status.code(), Some(0));
    assert!(stderr(&refused).contains("invalid peer certificate: UnknownIssuer"), "{}", stderr(&refused));

    // Trusted: the handshake succeeds and the request reaches the server, which answers with its
    // HTML status page instead of a model list.
    let reached = models(Some(&dir.path().join("ca.pem"))).await.unwrap();
    assert_ne!(reached.status.code(), Some(0));
    assert!(stderr(&reached).contains("did not answer with JSON"), "{}", stderr(&reached));
    server.kill().await.unwrap();
}
