// The dashboard's administration part (docs/web-api.md): ban buttons on each player row, the
// ban list with unban, a chat line to everyone, and the player limit and password. It uses the
// page's `$`, `logEvent` and `refresh`, and the admin token field. Everything from the network
// goes in as text (textContent), never as markup.
"use strict";

(function () {
  const token = () => $("token").value.trim();

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const c of children) e.append(c); // strings become text nodes
    return e;
  }

  // One admin request; logs the answer's status and first line. Returns the response text.
  async function send(method, path, body, what) {
    const r = await fetch(path, {
      method,
      headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await r.text()).trim();
    logEvent(what + ": " + r.status + " " + (r.headers.get("content-type") === "application/json" ? "ok" : answer));
    return { ok: r.ok, answer };
  }

  const section = el("section", { id: "admin" },
    el("h2", {}, "Administration"),
    el("form", { id: "a-chat" },
      el("label", {}, "Chat to everyone ", el("input", { id: "a-chat-text", size: "50", maxlength: "500" })),
      " ", el("button", { id: "a-chat-send" }, "Send")),
    el("form", { id: "a-ban" },
      el("label", {}, "Ban ",
        el("select", { id: "a-ban-kind" }, el("option", { value: "name" }, "name"), el("option", { value: "address" }, "address"))),
      " ", el("input", { id: "a-ban-value", size: "30" }), " ", el("button", { id: "a-ban-add" }, "Ban")),
    el("form", { id: "a-settings" },
      el("label", {}, "Max players ", el("input", { id: "a-max", type: "number", min: "0", size: "6" })),
      " ", el("button", { id: "a-max-set" }, "Set"), " ",
      el("label", {}, "Password ", el("input", { id: "a-password", type: "password", size: "16", autocomplete: "off" })),
      " ", el("button", { id: "a-password-set" }, "Set password"), " (empty: none)"),
    el("h2", {}, "Bans"),
    el("ul", { id: "a-bans" }));
  document.body.append(section);

  async function showBans() {
    if (!token()) return;
    const r = await fetch("/api/bans", { headers: { Authorization: "Bearer " + token() }, cache: "no-store" });
    if (!r.ok) return;
    const list = await r.json();
    const items = [];
    for (const [kind, values] of [["name", list.names], ["address", list.addresses]]) {
      for (const v of values) {
        const b = el("button", { "data-unban": kind }, "Unban");
        b.addEventListener("click", () => ban(kind, v, false));
        items.push(el("li", { "data-ban": kind }, kind + " " + v + " ", b));
      }
    }
    $("a-bans").replaceChildren(...items);
  }

  async function ban(kind, value, add) {
    const body = kind === "name" ? { name: value } : { address: value };
    const r = await send(add ? "POST" : "DELETE", "/api/bans", body, (add ? "ban " : "unban ") + kind + " " + value);
    if (r.ok) { showBans(); refresh(); }
  }

  $("a-chat").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = $("a-chat-text").value;
    const r = await send("POST", "/api/chat", { text }, "chat");
    if (r.ok) $("a-chat-text").value = "";
  });
  $("a-ban").addEventListener("submit", (e) => {
    e.preventDefault();
    ban($("a-ban-kind").value, $("a-ban-value").value.trim(), true);
  });
  $("a-max-set").addEventListener("click", (e) => {
    e.preventDefault();
    send("POST", "/api/settings", { max_players: Number($("a-max").value) }, "max players").then(refresh);
  });
  $("a-password-set").addEventListener("click", (e) => {
    e.preventDefault();
    send("POST", "/api/settings", { password: $("a-password").value }, "password");
  });

  // Ban buttons on each player row the page draws (not on our own).
  function decorate(tr) {
    if (tr.dataset.admin) return;
    tr.dataset.admin = "1";
    const cells = tr.children;
    const name = cells[0].textContent, address = cells[2].textContent, state = cells[4].textContent;
    if (state === "local") return;
    const action = cells[cells.length - 1];
    const byName = el("button", { "data-ban-name": "" }, "Ban name");
    byName.addEventListener("click", () => ban("name", name, true));
    action.append(" ", byName);
    const ip = address.startsWith("[") ? address.slice(1, address.indexOf("]")) : address.split(":")[0];
    if (ip && ip !== "–") {
      const byAddress = el("button", { "data-ban-address": "" }, "Ban address");
      byAddress.addEventListener("click", () => ban("address", ip, true));
      action.append(" ", byAddress);
    }
  }
  new MutationObserver(() => $("players").querySelectorAll("tr").forEach(decorate))
    .observe($("players"), { childList: true });
  $("players").querySelectorAll("tr").forEach(decorate);

  $("token").addEventListener("change", showBans);
  showBans();

  // What the host did with each command (the `admin` events).
  if (new URLSearchParams(location.hash.slice(1)).get("live") !== "0") {
    // EventSource cannot set headers: the token goes in the query, as the page's own stream.
    const events = new EventSource("/api/events?token=" + encodeURIComponent(token()));
    events.addEventListener("admin", (m) => logEvent("host: " + JSON.parse(m.data).text));
  }
})();
