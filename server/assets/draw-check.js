// "Check this draw" (design.md decision 42): recomputes a draw from its published transcript in
// the browser, with the browser's own SHA-256 and HMAC (Web Crypto), and says "Verified" or
// names the first thing that does not hold. It trusts nothing the shop computed: not the root,
// not the seed, not a key, not a rank. (The beacon round's BLS signature is checked by the
// command-line verifier; here its randomness is compared with the relay's when it answers.)
const out = document.getElementById("draw-check");
const steps = document.getElementById("draw-check-steps");
const voucher = out && out.dataset.voucher;

const enc = new TextEncoder();
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
const unhex = (text) => {
  if (typeof text !== "string" || text.length % 2 || /[^0-9a-f]/.test(text)) throw new Error(`not hex: ${text}`);
  const b = new Uint8Array(text.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(text.substr(i * 2, 2), 16);
  return b;
};
const sha256 = async (...parts) => {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
};
// The page's words in its language (`<html lang>`; the shop's catalogues are Rust, these few
// are the script's own).
const WORDS = {
  en: {
    pending: "Entries are closed and committed; the draw waits for its beacon round.",
    notRun: "The draw has not run yet: there is nothing to check but the commitment.",
    commitment: "the secret revealed is the one committed to at creation",
    outOfOrder: (i) => `leaf ${i} is out of order`,
    root: (n) => `the ${n} leaves hash to the committed root`,
    seed: "the seed is SHA-256 of the committed secret, the root and the beacon's randomness",
    rank: (i) => `rank ${i} is not the leaf with the ${i}th smallest key`,
    ranks: "every rank recomputes: leaves in ascending order of HMAC-SHA256(seed, leaf)",
    winners: (due, stock) => `the ${due} winners are the first ${due} ranks (${stock} units)`,
    moves: (n) => `${n} unit(s) given down the ranking since, each chained to the last`,
    beacon: (r) => `drand round ${r}'s randomness is the one used (its signature: see the command-line verifier)`,
    relay: (r) => `drand round ${r}: the relay could not be reached from this page; compare its randomness yourself`,
    verified: "Verified: this draw recomputes from what was published.",
    fails: (what) => `Does not hold: ${what}.`,
    noCrypto: "This browser cannot compute SHA-256 here (a secure context is needed); use the steps below.",
    checking: "Checking…",
    error: (m) => `Could not check: ${m}`,
  },
  "zh-CN": {
    pending: "报名已截止并已承诺；抽签正在等待信标轮次。",
    notRun: "抽签尚未进行：目前只能核对承诺值。",
    commitment: "公布的秘密正是创建时承诺的那个",
    outOfOrder: (i) => `第 ${i} 个叶的顺序不对`,
    root: (n) => `${n} 个叶的哈希等于承诺的根`,
    seed: "种子是承诺秘密、根和信标随机数的 SHA-256",
    rank: (i) => `第 ${i} 名不是键第 ${i} 小的叶`,
    ranks: "每个名次都能重新算出：叶按 HMAC-SHA256(seed, leaf) 升序排列",
    winners: (due, stock) => `${due} 位中签者就是前 ${due} 名（库存 ${stock} 件）`,
    moves: (n) => `此后按排名递补了 ${n} 个名额，每一项都链接到上一项`,
    beacon: (r) => `drand 第 ${r} 轮的随机数就是所用的随机数（签名请用命令行验证工具核对）`,
    relay: (r) => `drand 第 ${r} 轮：本页无法连到中继，请自行核对其随机数`,
    verified: "已核验：这次抽签可以从公布的内容重新算出。",
    fails: (what) => `不成立：${what}。`,
    noCrypto: "此浏览器在这里无法计算 SHA-256（需要安全上下文），请按下方步骤核对。",
    checking: "正在核验…",
    error: (m) => `无法核验：${m}`,
  },
};
const W = WORDS[document.documentElement.lang] || WORDS.en;

const cmp = (a, b) => { for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i]; return 0; };

// RFC 9162: leaf hash SHA-256(0x00 ‖ leaf), node hash SHA-256(0x01 ‖ left ‖ right), split at
// the largest power of two below n; the empty tree is SHA-256("").
async function root(leaves) {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(Uint8Array.of(0), leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Uint8Array.of(1), await root(leaves.slice(0, k)), await root(leaves.slice(k)));
}

function say(ok, text) {
  const li = document.createElement("li");
  li.textContent = `${ok ? "✓" : "✗"} ${text}`;
  li.className = ok ? "ok" : "bad";
  steps.appendChild(li);
  return ok;
}

async function check() {
  const t = await (await fetch(`/api/vouchers/${voucher}/draw`)).json();
  if (!t.seed) {
    out.dataset.state = "pending";
    out.textContent = t.entries_root
      ? W.pending
      : W.notRun;
    return;
  }
  const committed = unhex(t.committed_seed);
  if (!say(hex(await sha256(committed)) === t.commitment, W.commitment)) return fail("commitment");
  const leaves = t.leaves.map(unhex);
  for (let i = 1; i < leaves.length; i++) if (cmp(leaves[i - 1], leaves[i]) >= 0) return fail(W.outOfOrder(i + 1));
  const r = await root(leaves);
  if (!say(hex(r) === t.entries_root && leaves.length === t.entrants, W.root(leaves.length))) return fail("root");
  const seedText = `seckill-draw-v1:${t.voucher_id}:${t.committed_seed}:${t.entries_root}:${t.randomness}`;
  const seed = await sha256(enc.encode(seedText));
  if (!say(hex(seed) === t.seed, W.seed)) return fail("seed");
  const hmacKey = await crypto.subtle.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const keyed = [];
  for (const leaf of leaves) keyed.push({ leaf, key: new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, leaf)) });
  keyed.sort((a, b) => cmp(a.key, b.key) || cmp(a.leaf, b.leaf));
  for (let i = 0; i < keyed.length; i++) {
    const p = t.ranking[i];
    if (!p || p.rank !== i + 1 || p.leaf !== hex(keyed[i].leaf) || p.key !== hex(keyed[i].key)) {
      say(false, W.rank(i + 1));
      return fail(`rank ${i + 1}`);
    }
  }
  if (t.ranking.length !== keyed.length) return fail("the ranking's length");
  say(true, W.ranks);
  const due = Math.min(t.stock, keyed.length);
  const winnersOk = t.winners.length === due && t.winners.every((w, i) => w === hex(keyed[i].leaf));
  if (!say(winnersOk, W.winners(due, t.stock))) return fail("winners");
  let previous = seed;
  let after = due;
  for (const [i, m] of (t.moves || []).entries()) {
    const at = keyed.findIndex((k) => hex(k.leaf) === m.leaf);
    previous = await sha256(enc.encode(`${hex(previous)}:${m.leaf}:${m.reason}`));
    if (at < after || hex(previous) !== m.hash) return fail(`move ${i + 1}`);
    after = at + 1;
  }
  say(true, W.moves((t.moves || []).length));
  if (t.beacon) {
    try {
      const round = await (await fetch(`${t.beacon.url}/${t.beacon.chain_hash}/public/${t.beacon.round}`)).json();
      say(round.randomness === t.randomness, W.beacon(t.beacon.round));
    } catch {
      say(true, W.relay(t.beacon.round));
    }
  }
  out.dataset.state = "verified";
  out.textContent = W.verified;
}

function fail(what) {
  out.dataset.state = "mismatch";
  out.textContent = W.fails(what);
}

if (out && voucher) {
  if (!window.crypto || !crypto.subtle) {
    out.textContent = W.noCrypto;
  } else {
    out.textContent = W.checking;
    check().catch((e) => { out.dataset.state = "error"; out.textContent = W.error(e.message); });
  }
}
