//! Just enough of the Chrome DevTools Protocol to click in a page: headless Chromium with
//! `--remote-debugging-port=0`, the page's WebSocket found through `/json/list`, and
//! `Runtime.evaluate` / `Input.dispatchMouseEvent` over a minimal WebSocket client (RFC 6455:
//! masked text frames out, whole text frames in). Loopback only, to the port Chromium opened.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

/// Largest message read from Chromium.
const MAX_MESSAGE: u64 = 16 << 20;

/// A headless Chromium showing one page, driven over DevTools.
pub(super) struct Browser {
    ws: TcpStream,
    next_id: u64,
    /// Last, so the process ends after the socket closes.
    _chromium: Chromium,
}

/// The Chromium process and its profile, ended and removed when dropped.
struct Chromium {
    child: Child,
    profile: PathBuf,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Browser {
    /// Starts `chromium` on `url` and connects to the page.
    #[allow(clippy::disallowed_methods)] // the test's own clock
    pub(super) fn open(chromium: &str, url: &str) -> anyhow::Result<Self> {
        let profile = std::env::temp_dir().join(format!("dplay-web-cdp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        let child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--window-size=1200,900",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run chromium")?;
        let chromium = Chromium { child, profile };
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            let file = chromium.profile.join("DevToolsActivePort");
            if let Some(port) =
                std::fs::read_to_string(&file).ok().and_then(|t| t.lines().next()?.parse::<u16>().ok())
            {
                break port;
            }
            ensure!(Instant::now() < deadline, "chromium never opened its DevTools port");
            std::thread::sleep(Duration::from_millis(100));
        };
        let page = loop {
            let list: Value =
                serde_json::from_str(&http_get(port, "/json/list").context("DevTools /json/list")?)
                    .unwrap_or(Value::Null);
            let ws = list
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_owned));
            if let Some(ws) = ws {
                break ws;
            }
            ensure!(Instant::now() < deadline, "chromium shows no page");
            std::thread::sleep(Duration::from_millis(100));
        };
        let path =
            page.split_once(&format!("127.0.0.1:{port}")).map(|(_, p)| p.to_owned()).context("page url")?;
        let ws = handshake(port, &path).context("DevTools WebSocket handshake")?;
        Ok(Self { ws, next_id: 0, _chromium: chromium })
    }

    /// Calls a DevTools method; its result.
    pub(super) fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        send_text(&mut self.ws, &json!({ "id": id, "method": method, "params": params }).to_string())?;
        loop {
            let text = read_text(&mut self.ws).with_context(|| format!("DevTools: no answer to {method}"))?;
            let message: Value = serde_json::from_str(&text)?;
            if message["id"] == id {
                if let Some(e) = message.get("error") {
                    bail!("{method}: {e}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub(super) fn eval(&mut self, expression: &str) -> anyhow::Result<Value> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            bail!("{expression}: {e}");
        }
        Ok(r["result"]["value"].clone())
    }

    /// Waits until `expression` is true in the page.
    #[allow(clippy::disallowed_methods)]
    pub(super) fn wait_for(&mut self, what: &str, expression: &str, limit: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        while self.eval(expression)? != Value::Bool(true) {
            ensure!(Instant::now() < deadline, "the page never showed {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// A left click, as a mouse does it, at the middle of the element `selector_js` (an
    /// expression giving the element) finds.
    pub(super) fn click(&mut self, what: &str, element_js: &str) -> anyhow::Result<()> {
        let at = self.eval(&format!(
            "(() => {{ const e = {element_js}; if (!e) return null; e.scrollIntoView(); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ))?;
        let (Some(x), Some(y)) = (at[0].as_f64(), at[1].as_f64()) else {
            bail!("the page has no {what} to click");
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )?;
        }
        Ok(())
    }
}

/// One GET to the DevTools HTTP server; its body (by Content-Length: it may keep the
/// connection open).
fn http_get(port: u16, path: &str) -> anyhow::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")?;
    let mut reader = BufReader::new(s);
    let mut length = 0u64;
    loop {
        let mut line = String::new();
        ensure!(reader.read_line(&mut line)? > 0, "DevTools closed before its answer");
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
    }
    ensure!(length <= MAX_MESSAGE, "a DevTools answer over {MAX_MESSAGE} bytes");
    let mut body = String::new();
    reader.take(length).read_to_string(&mut body)?;
    Ok(body)
}

/// The WebSocket opening handshake (RFC 6455 4.1); the key need not be secret here.
fn handshake(port: u16, path: &str) -> anyhow::Result<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: ZHBsYXktZGFzaGJvYXJkIQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )?;
    let mut reader = BufReader::new(s.try_clone()?);
    let mut status = String::new();
    reader.read_line(&mut status)?;
    ensure!(status.contains(" 101 "), "DevTools refused the WebSocket: {status}");
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    ensure!(reader.buffer().is_empty(), "DevTools spoke before we asked");
    Ok(s)
}

/// One masked text frame (a client's frames must be masked, RFC 6455 5.3).
fn send_text(s: &mut TcpStream, text: &str) -> anyhow::Result<()> {
    let payload = text.as_bytes();
    let mut frame = vec![0x81u8];
    match payload.len() {
        n @ 0..=125 => frame.push(0x80 | u8::try_from(n)?),
        n @ 126..=0xFFFF => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&u16::try_from(n)?.to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&u64::try_from(n)?.to_be_bytes());
        }
    }
    let mask = [0x5a, 0x17, 0xc3, 0x8e];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
    s.write_all(&frame)?;
    Ok(())
}

/// The next text message (continuation frames joined; pings and other control frames skipped).
fn read_text(s: &mut TcpStream) -> anyhow::Result<String> {
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        s.read_exact(&mut head)?;
        let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0F);
        let len = match head[1] & 0x7F {
            126 => {
                let mut b = [0u8; 2];
                s.read_exact(&mut b)?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                s.read_exact(&mut b)?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        ensure!(head[1] & 0x80 == 0, "a server frame was masked");
        ensure!(message.len() as u64 + len <= MAX_MESSAGE, "a DevTools message over {MAX_MESSAGE} bytes");
        let mut payload = Vec::new();
        Read::by_ref(s).take(len).read_to_end(&mut payload)?;
        ensure!(payload.len() as u64 == len, "DevTools closed mid-frame");
        match opcode {
            0x8 => bail!("DevTools closed the WebSocket"),
            0x9 | 0xA => continue,
            _ => message.extend_from_slice(&payload),
        }
        if fin {
            return Ok(String::from_utf8(message)?);
        }
    }
}
