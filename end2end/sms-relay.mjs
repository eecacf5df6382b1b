// A stand-in for the operator's SMS relay (README, Security), for the sign-in journeys of a shop
// without dev login: it checks each request's signature as a relay should, keeps the last code
// per phone, and hands it to the journey (which plays the shopper reading their SMS).
//   node sms-relay.mjs <port> <secret>
//   POST /sms  {"phone","code","expires_in_s"}  X-Seckill-Signature: sha256=<hex>  → 204 | 401
//   GET  /codes?phone=+86…                                                        → 200 code | 404
//   POST /sms  {"kind":"reminder","id","phone","voucher_id","title","at","url","lang"}  → 204
//        (a repeated id is taken once, as a relay drops a repeat)
//   GET  /reminders?phone=+86…                                   → 200 [the reminders taken for it]
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const [port, secret] = process.argv.slice(2);
if (!port || !secret) {
  console.error("usage: node sms-relay.mjs <port> <secret>");
  process.exit(2);
}
const codes = new Map();
const reminders = new Map();
const seen = new Set();

function genuine(body, header) {
  const expected = Buffer.from("sha256=" + createHmac("sha256", secret).update(body).digest("hex"));
  const got = Buffer.from(header ?? "");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

createServer((req, res) => {
  const url = new URL(req.url, "http://relay");
  if (req.method === "GET" && url.pathname === "/codes") {
    const code = codes.get(url.searchParams.get("phone"));
    res.writeHead(code ? 200 : 404, { "content-type": "text/plain" }).end(code ?? "");
    return;
  }
  if (req.method === "GET" && url.pathname === "/reminders") {
    const got = reminders.get(url.searchParams.get("phone")) ?? [];
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(got));
    return;
  }
  if (req.method !== "POST" || url.pathname !== "/sms") {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (!genuine(body, req.headers["x-seckill-signature"])) {
      res.writeHead(401).end();
      return;
    }
    const message = JSON.parse(body.toString("utf8"));
    if (message.kind === "reminder") {
      if (!seen.has(message.id)) {
        seen.add(message.id);
        reminders.set(message.phone, [...(reminders.get(message.phone) ?? []), message]);
      }
      res.writeHead(204).end();
      return;
    }
    codes.set(message.phone, message.code);
    res.writeHead(204).end();
  });
}).listen(Number(port), "127.0.0.1");
