//! Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: it
//! reads commands on its fd 3 and writes answers and events on its fd 4, each JSON text ended by
//! a NUL byte), so that a test sends key events through the browser's own input pipeline and
//! reads the page back.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// How long one answer or event may take (generous: the machine is shared).
const WAIT: Duration = Duration::from_secs(60);

/// A page in a headless Chromium of its own; the browser is killed when this drops.
pub struct Page {
    child: std::process::Child,
    to: std::io::PipeWriter,
    from: Receiver<Value>,
    /// Events read while waiting for an answer.
    events: Vec<Value>,
    session: String,
    next: u64,
}

impl Page {
    /// Starts `chrome` (its profile in `profile`) and loads `url`, waiting for its load event.
    pub fn open(chrome: &Path, profile: &Path, url: &str) -> Page {
        let (cmd_r, cmd_w) = std::io::pipe().unwrap();
        let (ev_r, ev_w) = std::io::pipe().unwrap();
        let (r, w) = (cmd_r.as_raw_fd(), ev_w.as_raw_fd());
        let mut c = std::process::Command::new(chrome);
        c.args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
        ])
        .args(["--remote-debugging-pipe", "--window-size=1280,900"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe calls (fcntl, dup2). The ends are
        // copied above 10 first, so that neither lands on the other's target number.
        unsafe {
            c.pre_exec(move || {
                let (r2, w2) = (
                    libc::fcntl(r, libc::F_DUPFD_CLOEXEC, 10),
                    libc::fcntl(w, libc::F_DUPFD_CLOEXEC, 10),
                );
                if r2 < 0 || w2 < 0 || libc::dup2(r2, 3) < 0 || libc::dup2(w2, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().expect("chromium starts");
        drop((cmd_r, ev_w));
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || {
            for msg in BufReader::new(ev_r).split(0) {
                let Ok(msg) = msg else { return };
                let Ok(v) = serde_json::from_slice(&msg) else {
                    return;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut page = Page {
            child,
            to: cmd_w,
            from,
            events: Vec::new(),
            session: String::new(),
            next: 0,
        };
        let target = page.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = page.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        page.session = attached["sessionId"].as_str().unwrap().to_owned();
        page.call("Page.enable", json!({}));
        page.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        );
        page.call("Page.setLifecycleEventsEnabled", json!({"enabled": true}));
        let nav = page.call("Page.navigate", json!({"url": url}));
        // The load of this navigation, not a late one of about:blank.
        loop {
            let e = page.event("Page.lifecycleEvent");
            if e["params"]["name"] == "load" && e["params"]["loaderId"] == nav["loaderId"] {
                break;
            }
        }
        page
    }

    /// Sends `method` (to the page once attached) and returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = self.session.clone().into();
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        loop {
            let v = self.read(method);
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self, waiting_for: &str) -> Value {
        self.from
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("chromium: no answer to {waiting_for} ({e})"))
    }

    /// Waits for the event `method` of the page.
    pub fn event(&mut self, method: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            return self.events.remove(i);
        }
        loop {
            let v = self.read(method);
            if v["method"] == method {
                return v;
            }
        }
    }

    /// The value of `expr` in the page (a promise is awaited).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Presses and releases `key` (a `KeyboardEvent.key`: `ArrowDown`, `Enter`, `" "`, …),
    /// with Ctrl held when `ctrl`.
    pub fn key(&mut self, key: &str, ctrl: bool) {
        let (code, vk, text) = match key {
            "ArrowLeft" => ("ArrowLeft", 37, ""),
            "ArrowUp" => ("ArrowUp", 38, ""),
            "ArrowRight" => ("ArrowRight", 39, ""),
            "ArrowDown" => ("ArrowDown", 40, ""),
            "Home" => ("Home", 36, ""),
            "End" => ("End", 35, ""),
            "PageUp" => ("PageUp", 33, ""),
            "PageDown" => ("PageDown", 34, ""),
            "Enter" => ("Enter", 13, "\r"),
            " " => ("Space", 32, " "),
            "Escape" => ("Escape", 27, ""),
            "Tab" => ("Tab", 9, ""),
            other => panic!("no key code for {other}"),
        };
        let modifiers = if ctrl { 2 } else { 0 };
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({"type": kind, "key": key, "code": code, "modifiers": modifiers,
                "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk});
            if kind == "keyDown" && !text.is_empty() && !ctrl {
                p["text"] = text.into();
            }
            self.call("Input.dispatchKeyEvent", p);
        }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
