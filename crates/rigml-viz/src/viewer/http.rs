//! A minimal HTTP/1.1 server for the viewer: GET and HEAD of the fixed paths a [`Site`]
//! knows, one thread per connection (the browser fetches the module files in parallel),
//! `Connection: close` after each answer. It binds to 127.0.0.1 only and answers only
//! requests whose `Host` is this address (or `localhost`), so a web page elsewhere cannot read
//! the model through DNS rebinding.

use super::Site;
use crate::VizError;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest request head read (request line + headers).
const MAX_HEAD: usize = 16 * 1024;
/// Connections served at once; more are answered 503.
const MAX_CONNECTIONS: usize = 64;
/// A client that sends nothing for this long is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The viewer's server, bound and ready to [`Server::serve`].
pub struct Server {
    listener: TcpListener,
    site: Arc<Site>,
}

impl Server {
    /// Bind 127.0.0.1:`port` (0 = any free port).
    pub fn bind(port: u16, site: Site) -> Result<Server, VizError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|source| VizError::Serve {
            what: format!("cannot listen on 127.0.0.1:{port}"),
            source,
        })?;
        Ok(Server {
            listener,
            site: Arc::new(site),
        })
    }

    /// The address bound (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> Result<SocketAddr, VizError> {
        self.listener.local_addr().map_err(|source| VizError::Serve {
            what: "cannot read the bound address".into(),
            source,
        })
    }

    /// The page's address, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> Result<String, VizError> {
        Ok(format!("http://{}/", self.addr()?))
    }

    /// Answer requests until the process ends. Errors of single connections are dropped (the
    /// browser retries); only a failing listener ends the loop.
    pub fn serve(self) -> Result<(), VizError> {
        let port = self.addr()?.port();
        let active = Arc::new(AtomicUsize::new(0));
        for stream in self.listener.incoming() {
            let stream = match stream {
                Ok(s) => s,
                // Transient accept failures (a client that vanished, no file descriptors for a
                // moment) must not stop the viewer.
                Err(_) => continue,
            };
            if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                active.fetch_sub(1, Ordering::SeqCst);
                let _ = respond(&stream, 503, "text/plain", b"busy", false);
                continue;
            }
            let (site, counter) = (Arc::clone(&self.site), Arc::clone(&active));
            let spawned = std::thread::Builder::new()
                .name("rigml-view-conn".into())
                .spawn(move || {
                    let _ = handle(stream, &site, port);
                    counter.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                // No thread for it: the stream was dropped (the browser sees a reset and retries).
                active.fetch_sub(1, Ordering::SeqCst);
            }
        }
        Ok(())
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    method: String,
    path: String,
    host: Option<String>,
}

/// Read the request head: request line and headers up to the blank line.
fn read_request(stream: &TcpStream) -> Result<Option<Request>, std::io::Error> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut reader = BufReader::new(stream.take(MAX_HEAD as u64));
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let mut request = Request {
        method: method.to_string(),
        path: target.split(['?', '#']).next().unwrap_or("/").to_string(),
        host: None,
    };
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            // The head did not end within MAX_HEAD bytes (or the client hung up).
            return Ok(None);
        }
        let header = header.trim_end();
        if header.is_empty() {
            return Ok(Some(request));
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("host") {
                request.host = Some(value.trim().to_ascii_lowercase());
            }
        }
    }
}

/// Serve one connection: one request, one answer.
fn handle(stream: TcpStream, site: &Site, port: u16) -> Result<(), std::io::Error> {
    let Some(request) = read_request(&stream)? else {
        return respond(&stream, 400, "text/plain", b"bad request", false);
    };
    let allowed = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !request.host.as_ref().is_some_and(|h| allowed.contains(h)) {
        return respond(&stream, 421, "text/plain", b"unknown host", false);
    }
    let head = match request.method.as_str() {
        "GET" => false,
        "HEAD" => true,
        _ => return respond(&stream, 405, "text/plain", b"only GET and HEAD", false),
    };
    match site.get(&request.path) {
        Some((body, content_type)) => respond(&stream, 200, content_type, body, head),
        None => respond(&stream, 404, "text/plain", b"not found", head),
    }
}

/// Write one answer. `no-cache` (revalidate every time) rather than `no-store`: Chromium reports
/// streamed `no-store` fetches that completed as aborted (microsoft/playwright#42742), which
/// would read as load errors in the browser test.
fn respond(mut stream: &TcpStream, status: u16, content_type: &str, body: &[u8], head: bool) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        421 => "Misdirected Request",
        _ => "Service Unavailable",
    };
    let header = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes())?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewer::Model;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn answers_known_paths_only_for_local_hosts() {
        let model = Model {
            label: "m".into(),
            glb: b"glTF-bytes".to_vec(),
            joints: vec![],
            parents: vec![],
            clips: vec![],
            vertices: 0,
            triangles: 0,
            skinned: false,
        };
        let server = Server::bind(0, Site::new(model, None)).unwrap();
        let addr = server.addr().unwrap();
        assert_eq!(server.url().unwrap(), format!("http://{addr}/"));
        std::thread::spawn(move || server.serve());
        let host = format!("Host: 127.0.0.1:{}\r\n", addr.port());
        let ok = get(addr, &format!("GET /model.glb?x=1 HTTP/1.1\r\n{host}\r\n"));
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains("Content-Length: 10\r\n") && ok.ends_with("\r\n\r\nglTF-bytes"),
            "{ok}"
        );
        let head = get(addr, &format!("HEAD /model.glb HTTP/1.1\r\n{host}\r\n"));
        assert!(head.starts_with("HTTP/1.1 200") && head.ends_with("\r\n\r\n"), "{head}");
        assert!(get(addr, &format!("GET /compare.glb HTTP/1.1\r\n{host}\r\n")).starts_with("HTTP/1.1 404"));
        assert!(get(addr, &format!("POST / HTTP/1.1\r\n{host}\r\n")).starts_with("HTTP/1.1 405"));
        assert!(get(addr, "GET / HTTP/1.1\r\nHost: evil.example:80\r\n\r\n").starts_with("HTTP/1.1 421"));
        assert!(get(addr, "garbage\r\n").starts_with("HTTP/1.1 400"));
        // A head that never ends is refused after MAX_HEAD bytes.
        // (Exactly MAX_HEAD bytes: the server reads them all, so it closes without a reset.)
        let start = "GET / HTTP/1.1\r\nX: ";
        let huge = format!("{start}{}", "a".repeat(MAX_HEAD - start.len()));
        assert!(get(addr, &huge).starts_with("HTTP/1.1 400"));
    }
}
