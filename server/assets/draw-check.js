// "Check this draw" (design.md decision 42): recomputes a draw from its published transcript in
// the browser, with the browser's own SHA-256 and HMAC (Web Crypto), and checks its drand round
// against the relay the transcript names: the round emitted after the entries closed, its
// randomness the one the draw used, and its BLS signature (@noble/curves, vendored under
// /pkg/noble/ by scripts/build.sh) against the public key of a chain this page knows. It trusts
// nothing the shop computed: not the root, not the seed, not a key, not a rank, not the relay.
// The rules are domain/src/fair (check.rs, chain.rs): the same ones, a second implementation.
// Beside the transcript it reads the sale's end (`GET /api/vouchers/{id}`) when a rule needs it.
//
// When the transcript publishes an outside witness (an RFC 3161 timestamp of the committed list
// and the round, `transcript.witness`), the page reads its token (a small DER reader) and checks
// what it states: this draw's imprint, the time the transcript states, before the round was
// emitted. The authority's signature over it is checked offline (`openssl ts -verify`, the
// command shown); without a witness the close's time is the shop's word (a neutral step).
//
// The page ends in one of these states (`data-state` of #draw-check):
//   verified   every step held, the beacon round included (and the witness, when published);
//   mismatch   a step does not hold (the first one is named);
//   unchecked  everything published recomputes, but the beacon round could not be checked from
//              here (the relay not reached, a chain whose key this page does not know, no BLS
//              library): never "verified";
//   pending    no draw yet (what is published so far is checked);
//   error      the shop's answers could not be had, or this browser cannot compute here.
const out = document.getElementById("draw-check");
const steps = document.getElementById("draw-check-steps");
const voucher = out && out.dataset.voucher;

// drand chains whose public key this page knows (quicknet, as drand's own clients pin it).
// A relay is only a transport: a round's signature verifies against this key or it is refused.
// An entry is used only if its info hashes to its chain hash (`chainHash`), as drand derives it.
const CHAINS = {
  // quicknet
  "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971": {
    scheme: "bls-unchained-g1-rfc9380",
    publicKey:
      "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
    genesis: 1692803367,
    period: 3,
    groupHash: "f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e",
    beaconID: "quicknet",
  },
};
// The BLS12-381 module, vendored from npm (scripts/setup.sh pins it, scripts/build.sh copies it).
const BLS_MODULE = "/pkg/noble/curves/bls12-381.js";
const RELAY_TIMEOUT_MS = 10_000;

const enc = new TextEncoder();
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
const isHex = (text, bytes) =>
  typeof text === "string" && text.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(text) &&
  (bytes === undefined || text.length === bytes * 2);
const unhex = (text) => {
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
const cmp = (a, b) => { for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i]; return 0; };
const isCount = (n) => Number.isSafeInteger(n) && n >= 0;
const short = (h) => `${h.slice(0, 8)}…`;
// Seconds, to a tenth.
const secs = (s) => `${Math.round(s * 10) / 10}`;

// The page's words in its language (`<html lang>`; the shop's catalogues are Rust, these are
// the script's own). Text between backticks is shown as code (field names, hashes).
const WORDS = {
  en: {
    checking: "Checking…",
    verified: "Verified: this draw recomputes from what was published.",
    fails: (what) => `Does not hold: ${what}.`,
    unchecked: (why) =>
      `Recomputes from what was published, but the beacon round could not be checked from this page: ${why}. The command-line verifier checks it.`,
    pending: "Entries are closed and committed; the draw waits for its beacon round.",
    notRun: "The draw has not run yet: there is nothing to check but the commitment.",
    ended: "The sale ended before its start: no draw ran, and the secret committed at creation is revealed.",
    noCrypto: "This browser cannot compute SHA-256 here (a secure context is needed); use the steps below.",
    shopUnreachable: "Could not reach the shop to fetch the draw's transcript; try again later.",
    shopAnswered: (status) => `The shop answered ${status}; try again later.`,
    notTranscript: "The shop's answer is not a draw transcript.",
    notSale: "The shop's answer about this sale cannot be read.",
    scriptFailed: "Could not check: this page's script failed (its console says why).",
    // Steps that held.
    commitment: "the secret revealed is the one committed to at creation",
    root: (n) => `the ${n} leaves hash to the committed root`,
    seed: "the seed is SHA-256 of the committed secret, the root and the beacon's randomness",
    ranks: "every rank recomputes: leaves in ascending order of `HMAC-SHA256(seed, leaf)`",
    winners: (due, stock) => `the ${due} winners are the first ${due} ranks (${stock} units)`,
    cut: (n, stock) => `the sale ended before the draw was recorded: the ${n} winner(s) admitted before its end are the first ${n} ranks (${stock} units)`,
    moves: (n) => `${n} unit(s) given down the ranking since the entries closed, each to the entrant ranked next, each before the sale's end and chained to the last`,
    noMoves: "no unit given down the ranking since the entries closed",
    emitted: (r, s) => `drand round ${r} was emitted ${s} s after the entries closed`,
    moved: (p, r) => `the round named at creation, ${p}, was emitted before the entries closed; the draw took round ${r}, emitted after the close`,
    sameRandomness: (r) => `the relay's randomness for drand round ${r} is the one the draw used, and it is the SHA-256 of the round's signature`,
    signed: (r) => `drand round ${r}'s BLS signature verifies against the public key of drand's chain, which this page knows`,
    signedByRelayKey: (r) => `drand round ${r}'s BLS signature verifies against the public key the relay serves`,
    // What does not hold.
    otherVoucher: (theirs, ours) => `the transcript is sale ${theirs}'s, not this sale's (${ours})`,
    missing: (field) => `the transcript has no \`${field}\``,
    malformed: (field) => `\`${field}\` is not well formed`,
    commitmentBad: "the secret revealed does not hash to the commitment published at creation",
    unsorted: (i) => `the leaves are not in ascending order and distinct (at leaf ${i})`,
    entrants: (n, leaves) => `${n} entrants published, ${leaves} leaves`,
    rootBad: "the leaves do not hash to the committed root",
    seedBad: "the seed does not recompute from the committed secret, the root and the randomness",
    rankLength: (ranked, leaves) => `${ranked} entrants ranked, ${leaves} leaves`,
    rankNumber: (i, n) => `rank ${i} is numbered ${n}`,
    rankLeaf: (i) => `rank ${i} is not the leaf the keys put there`,
    rankKey: (i) => `rank ${i}'s key does not recompute`,
    winnersBad: (due) => `the winners are not the first ${due} ranks`,
    winnersCut: (due) => `the winners are not the first ranks (at most ${due}: the sale ended before the draw was recorded)`,
    moveReason: (i) => `move ${i} gives no known reason`,
    moveStranger: (i) => `move ${i} goes to a leaf not in the list`,
    moveNotNext: (i, rank, next) => `move ${i} goes to rank ${rank}, not to rank ${next}, the next`,
    moveBeyond: (i, rank) => `move ${i} goes to rank ${rank}, but every entrant was reached before it`,
    moveAfterEnd: (i) => `move ${i} was given once the sale had ended`,
    moveHash: (i) => `move ${i}'s hash does not chain from the one before it`,
    noBeacon: "the draw names no beacon round: its ranking rests on the shop's own secret alone, which the shop knew when the entries closed",
    plannedNotBefore: (p, r) => `the round named at creation, ${p}, is not before the round used, ${r}`,
    namedBeforeStart: (r) => `the round named at creation, ${r}, was emitted before the entries were to close`,
    plannedLate: (p) => `the round named at creation, ${p}, was emitted after the entries closed, yet another round was used`,
    notAfterClose: (r, s) => `drand round ${r} was not emitted after the entries closed (they closed ${s} s after it)`,
    otherChain: "the relay serves another chain than the one the transcript names",
    otherRound: (r) => `the relay answered another round than ${r}`,
    otherRandomness: (r) => `the relay's randomness for drand round ${r} is not the one the draw used`,
    notSignatureHash: (r) => `drand round ${r}'s randomness is not the SHA-256 of its signature`,
    badSignature: (r) => `drand round ${r}'s BLS signature does not verify against the chain's public key`,
    // What could not be checked from here.
    relayDown: (url) => `the relay \`${url}\` could not be reached`,
    relayAnswered: (url, status) => `the relay \`${url}\` answered ${status}`,
    relayUnreadable: (url) => `the relay \`${url}\` answered something this page cannot read`,
    unknownChain: (h) => `chain \`${short(h)}\` is not one whose public key this page knows, so its key is only the relay's word`,
    unknownScheme: (s) => `the chain's signature scheme \`${s}\` is not one this page verifies`,
    noBls: (r) => `drand round ${r}'s BLS signature is not checked here (this page's BLS library could not be loaded)`,
    // The relay's chain info, when the chain is not one this page knows.
    chainInfo: (h) => `the relay's chain info (period, genesis, public key, group hash, beacon ID) hashes to the chain the transcript names, \`${short(h)}\``,
    // The outside witness (RFC 3161 timestamp) of the committed list and the round.
    noWitness: "no outside timestamp: the close's time is the shop's word",
    witnessed: (tsa, at, r, e) => `timestamped by \`${tsa}\` at \`${at}\`, before round ${r} was emitted (\`${e}\`)`,
    witnessedNoRound: (tsa, at) => `timestamped by \`${tsa}\` at \`${at}\``,
    witnessUnclocked: (tsa, at, r) => `timestamped by \`${tsa}\` at \`${at}\`, but not compared with round ${r}'s emission: the chain's clock is not known here`,
    witnessOffline: "The authority's signature is not checked in this browser; with its certificate, this command checks it:",
    certificate: "<the authority's certificate>",
    witnessUnreadable: "`witness.token` is not a timestamp token this page can read (an RFC 3161 TimeStampToken over a SHA-256 imprint)",
    witnessOther: (m) => `the outside timestamp covers another list or round than this draw's (its imprint is not the SHA-256 of \`${m}\`)`,
    witnessAt: (token, said) => `the outside timestamp's token says \`${token}\`, the transcript \`${said}\``,
    witnessLate: (at, r, e) => `the outside timestamp, \`${at}\`, is not before round ${r} was emitted (\`${e}\`): it does not show the list was fixed before the randomness`,
  },
  "zh-CN": {
    checking: "正在核验…",
    verified: "已核验：这次抽签可以从公布的内容重新算出。",
    fails: (what) => `不成立：${what}。`,
    unchecked: (why) => `可以从公布的内容重新算出，但本页无法核对信标轮次：${why}。命令行验证工具可以核对。`,
    pending: "报名已截止并已承诺；抽签正在等待信标轮次。",
    notRun: "抽签尚未进行：目前只能核对承诺值。",
    ended: "抢购在开售前就结束了：没有进行抽签，创建时承诺的秘密已经公布。",
    noCrypto: "此浏览器在这里无法计算 SHA-256（需要安全上下文），请按下方步骤核对。",
    shopUnreachable: "无法连接本店，未能取得抽签记录，请稍后再试。",
    shopAnswered: (status) => `本店返回了${status}，请稍后再试。`,
    notTranscript: "本店的回应不是抽签记录。",
    notSale: "无法读取本店关于本场抢购的回应。",
    scriptFailed: "无法核验：本页脚本出错（原因见浏览器控制台）。",
    commitment: "公布的秘密正是创建时承诺的那个",
    root: (n) => `${n}个叶的哈希等于承诺的根`,
    seed: "种子是承诺秘密、根和信标随机数的 SHA-256",
    ranks: "每个名次都能重新算出：叶按以种子为密钥的 HMAC-SHA256 值升序排列",
    winners: (due, stock) => `${due}位中签者就是前${due}名（库存${stock}张）`,
    cut: (n, stock) => `抢购在抽签记录之前已结束：结束前录取的${n}位中签者就是前${n}名（库存${stock}张）`,
    moves: (n) => `报名截止后按排名递补了${n}个名额：每个名额都给了排名紧接其后的报名者，都在抢购结束之前，且每一项都链接到上一项`,
    noMoves: "报名截止后没有按排名递补的名额",
    emitted: (r, s) => `drand 第${r}轮在报名截止${s}秒后才产生`,
    moved: (p, r) => `创建时指定的第${p}轮在报名截止前就已产生，因此抽签改用截止后才产生的第${r}轮`,
    sameRandomness: (r) => `中继给出的 drand 第${r}轮随机数就是抽签所用的，且等于该轮签名的 SHA-256`,
    signed: (r) => `drand 第${r}轮的 BLS 签名可以用本页已知的 drand 公钥验证通过`,
    signedByRelayKey: (r) => `drand 第${r}轮的 BLS 签名可以用中继提供的公钥验证通过`,
    otherVoucher: (theirs, ours) => `这份记录属于第${theirs}号抢购，不是本场（第${ours}号）`,
    missing: (field) => `记录中缺少 \`${field}\``,
    malformed: (field) => `\`${field}\` 的格式不对`,
    commitmentBad: "公布的秘密的 SHA-256 不等于创建时公布的承诺值",
    unsorted: (i) => `叶没有按升序排列或有重复（第${i}个叶处）`,
    entrants: (n, leaves) => `公布的报名人数是${n}，叶却有${leaves}个`,
    rootBad: "叶的哈希不等于承诺的根",
    seedBad: "种子不能由承诺的秘密、根和随机数重新算出",
    rankLength: (ranked, leaves) => `排名有${ranked}人，叶有${leaves}个`,
    rankNumber: (i, n) => `第${i}名被标为第${n}名`,
    rankLeaf: (i) => `第${i}名不是按键排在这一位的叶`,
    rankKey: (i) => `第${i}名的键不能重新算出`,
    winnersBad: (due) => `中签者不是排名前${due}位`,
    winnersCut: (due) => `中签者不是排名最前的几位（最多${due}位：抢购在抽签记录之前已结束）`,
    moveReason: (i) => `第${i}次递补的原因无法识别`,
    moveStranger: (i) => `第${i}次递补给了名单之外的叶`,
    moveNotNext: (i, rank, next) => `第${i}次递补给了第${rank}名，而不是紧接其后的第${next}名`,
    moveBeyond: (i, rank) => `第${i}次递补给了第${rank}名，但在此之前所有报名者都已轮到`,
    moveAfterEnd: (i) => `第${i}次递补发生在抢购结束之后`,
    moveHash: (i) => `第${i}次递补的哈希不能由上一项链接算出`,
    noBeacon: "这次抽签没有指定信标轮次：排名只取决于本店自己的秘密，而本店在报名截止时就已知道它",
    plannedNotBefore: (p, r) => `创建时指定的第${p}轮并不早于所用的第${r}轮`,
    namedBeforeStart: (r) => `创建时指定的第${r}轮在报名应截止之前就已产生`,
    plannedLate: (p) => `创建时指定的第${p}轮在报名截止后才产生，却改用了别的轮次`,
    notAfterClose: (r, s) => `drand 第${r}轮不是在报名截止之后产生的（截止比它晚${s}秒）`,
    otherChain: "中继提供的不是记录中指定的那条链",
    otherRound: (r) => `中继返回的不是第${r}轮`,
    otherRandomness: (r) => `中继给出的 drand 第${r}轮随机数与抽签所用的不同`,
    notSignatureHash: (r) => `drand 第${r}轮的随机数不是其签名的 SHA-256`,
    badSignature: (r) => `drand 第${r}轮的 BLS 签名不能用该链的公钥验证通过`,
    relayDown: (url) => `无法连到中继 \`${url}\``,
    relayAnswered: (url, status) => `中继 \`${url}\` 返回了${status}`,
    relayUnreadable: (url) => `无法读取中继 \`${url}\` 的回应`,
    unknownChain: (h) => `本页不知道链 \`${short(h)}\` 的公钥，该公钥只是中继的一面之词`,
    unknownScheme: (s) => `本页不能验证该链的签名方案 \`${s}\``,
    noBls: (r) => `本页未能核对 drand 第${r}轮的 BLS 签名（无法加载本页的 BLS 程序库）`,
    chainInfo: (h) => `中继提供的链信息（周期、起始时间、公钥、组哈希、信标标识）的哈希正是记录中指定的链 \`${short(h)}\``,
    noWitness: "没有外部时间戳：截止时间只是本店的说法",
    witnessed: (tsa, at, r, e) => `由 \`${tsa}\` 在 \`${at}\` 加盖时间戳，早于第${r}轮产生的时间（\`${e}\`）`,
    witnessedNoRound: (tsa, at) => `由 \`${tsa}\` 在 \`${at}\` 加盖时间戳`,
    witnessUnclocked: (tsa, at, r) => `由 \`${tsa}\` 在 \`${at}\` 加盖时间戳，但本页不知道该链的时钟，未能与第${r}轮的产生时间比较`,
    witnessOffline: "本页不在浏览器中核对时间戳机构的签名；可用该机构的证书，以下面的命令离线核对：",
    certificate: "<时间戳机构的证书>",
    witnessUnreadable: "`witness.token` 不是本页能读取的时间戳令牌（须为对 SHA-256 摘要签发的时间戳）",
    witnessOther: (m) => `外部时间戳针对的是另一份名单或另一轮，而不是本次抽签的（其摘要不是 \`${m}\` 的 SHA-256）`,
    witnessAt: (token, said) => `外部时间戳的令牌时间是 \`${token}\`，记录中却是 \`${said}\``,
    witnessLate: (at, r, e) => `外部时间戳（\`${at}\`）并不早于第${r}轮产生的时间（\`${e}\`），不能证明名单在随机数产生前已固定`,
  },
};
const W = WORDS[document.documentElement.lang] || WORDS.en;

// `text` into `el`, the parts between backticks as <code>.
function write(el, text) {
  el.replaceChildren();
  text.split("`").forEach((part, i) => {
    if (!part) return;
    if (i % 2) {
      const code = document.createElement("code");
      code.textContent = part;
      el.appendChild(code);
    } else {
      el.appendChild(document.createTextNode(part));
    }
  });
}

// One step: "ok" ✓, "bad" ✗, "unchecked" – (not checked from here: neither held nor failed),
// "neutral" ○ (nothing to check, and nothing it prevents). Returns the step's <li>.
const MARKS = { ok: "✓", bad: "✗", unchecked: "–", neutral: "○" };
function say(mark, text) {
  const li = document.createElement("li");
  write(li, `${MARKS[mark]} ${text}`);
  li.className = mark;
  steps.appendChild(li);
  return li;
}

// How a check ends before its last step.
class Stop extends Error {
  constructor(state, sentence) {
    super(sentence);
    this.state = state;
    this.sentence = sentence;
  }
}
// A step that does not hold: listed, and the check ends in "mismatch".
function refuse(reason) {
  say("bad", reason);
  return new Stop("mismatch", W.fails(reason));
}
const hold = (ok, text, reason) => {
  if (!ok) throw refuse(reason);
  say("ok", text);
};

// RFC 9162: leaf hash SHA-256(0x00 ‖ leaf), node hash SHA-256(0x01 ‖ left ‖ right), split at
// the largest power of two below n; the empty tree is SHA-256("").
async function root(leaves) {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(Uint8Array.of(0), leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Uint8Array.of(1), await root(leaves.slice(0, k)), await root(leaves.slice(k)));
}

// An RFC 3339 time in seconds since the epoch, fractions kept (NaN when it is not one).
function seconds(text) {
  const m = typeof text === "string" && /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return NaN;
  return Date.parse(`${m[1]}${m[3]}`) / 1000 + (m[2] ? Number(`0${m[2]}`) : 0);
}

// An instant to compare exactly: whole seconds since the epoch and the fraction's digits (no
// trailing zeros); null when `text` is not an RFC 3339 time.
function instant(text) {
  const m = typeof text === "string" && /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (Number.isNaN(ms)) return null;
  return { s: ms / 1000, f: (m[2] || "").replace(/0+$/, "") };
}
const sameInstant = (a, b) => a.s === b.s && a.f === b.f;
// An instant as RFC 3339 in UTC (`2023-08-23T15:10:00Z`).
const rfc3339 = ({ s, f }) => `${new Date(s * 1000).toISOString().slice(0, 19)}${f ? `.${f}` : ""}Z`;

// A drand chain's hash recomputed from its info as drand derives it (domain/src/fair/chain.rs
// `chain_hash`, drand's `Info::Hash`): SHA-256 of the period in seconds (u32, big-endian), the
// genesis time (i64, big-endian), the public key as published, the group hash, then the beacon
// ID's UTF-8 bytes unless it is "" or "default". The scheme is not hashed. Null when a field is
// not well formed.
async function chainHash(period, genesis, publicKey, groupHash, beaconID) {
  if (!Number.isSafeInteger(period) || period < 0 || period > 0xffffffff || !Number.isSafeInteger(genesis) ||
      !isHex(publicKey) || !isHex(groupHash) || typeof beaconID !== "string") {
    return null;
  }
  const clock = new Uint8Array(12);
  const view = new DataView(clock.buffer);
  view.setUint32(0, period);
  view.setBigInt64(4, BigInt(genesis));
  const id = beaconID === "" || beaconID === "default" ? new Uint8Array(0) : enc.encode(beaconID);
  return hex(await sha256(clock, unhex(publicKey), unhex(groupHash), id));
}

// The chain this page pins under `hash`, if its info hashes to it (else null: not known here).
async function pinnedChain(hash) {
  const c = Object.hasOwn(CHAINS, hash) ? CHAINS[hash] : null;
  if (!c) return null;
  return (await chainHash(c.period, c.genesis, c.publicKey, c.groupHash, c.beaconID)) === hash ? c : null;
}

// RFC 3161 timestamp tokens, read as domain/src/fair/witness/mod.rs `read_token` reads them: a
// small DER reader, the path ContentInfo → [0] → SignedData → encapContentInfo (id-ct-TSTInfo)
// → [0] → OCTET STRING → TSTInfo { version, policy, messageImprint { sha256, hash }, serial,
// genTime }. The signature is not checked here (`openssl ts -verify` does, offline).
const SIGNED_DATA_OID = "2a864886f70d010702"; // 1.2.840.113549.1.7.2
const TST_INFO_OID = "2a864886f70d0109100104"; // 1.2.840.113549.1.9.16.1.4
const SHA256_OID = "608648016503040201"; // 2.16.840.1.101.3.4.2.1
class DerError extends Error {}

// The DER element of `b` at `at`, within `end`: its tag, its content's bounds, where it ends.
function element(b, at, end) {
  if (at + 2 > end) throw new DerError("truncated");
  const tag = b[at];
  let len = b[at + 1];
  let start = at + 2;
  if (len >= 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > end) throw new DerError("a length this reader does not take");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i];
    start += n;
  }
  if (start + len > end) throw new DerError("an element longer than its input");
  return { tag, start, end: start + len };
}
// The element tagged `tag` at `at` (within `end`).
function expect(b, at, end, tag) {
  const e = element(b, at, end);
  if (e.tag !== tag) throw new DerError(`an unexpected element (tag ${e.tag}, not ${tag})`);
  return e;
}
const contentHex = (b, e) => hex(b.subarray(e.start, e.end));

// What a token states: `{ imprint, at }` (the SHA-256 imprint, genTime as an instant).
function readToken(b) {
  const contentInfo = expect(b, 0, b.length, 0x30);
  const type = expect(b, contentInfo.start, contentInfo.end, 0x06);
  if (contentHex(b, type) !== SIGNED_DATA_OID) throw new DerError("not signed data");
  const explicit = expect(b, type.end, contentInfo.end, 0xa0);
  const signedData = expect(b, explicit.start, explicit.end, 0x30);
  const version = expect(b, signedData.start, signedData.end, 0x02);
  const digests = expect(b, version.end, signedData.end, 0x31);
  const encap = expect(b, digests.end, signedData.end, 0x30);
  const content = expect(b, encap.start, encap.end, 0x06);
  if (contentHex(b, content) !== TST_INFO_OID) throw new DerError("not a TSTInfo");
  const wrapped = expect(b, content.end, encap.end, 0xa0);
  const octets = expect(b, wrapped.start, wrapped.end, 0x04);

  const info = expect(b, octets.start, octets.end, 0x30);
  const infoVersion = expect(b, info.start, info.end, 0x02);
  const policy = expect(b, infoVersion.end, info.end, 0x06);
  const imprint = expect(b, policy.end, info.end, 0x30);
  const algorithm = expect(b, imprint.start, imprint.end, 0x30);
  const oid = expect(b, algorithm.start, algorithm.end, 0x06);
  if (contentHex(b, oid) !== SHA256_OID) throw new DerError("an imprint not SHA-256");
  const hashed = expect(b, algorithm.end, imprint.end, 0x04);
  if (hashed.end - hashed.start !== 32) throw new DerError("an imprint not SHA-256");
  const serial = expect(b, imprint.end, info.end, 0x02);
  const time = expect(b, serial.end, info.end, 0x18);
  const raw = String.fromCharCode(...b.subarray(time.start, time.end));
  const at = generalizedTime(raw);
  if (!at) throw new DerError(`genTime ${JSON.stringify(raw)} is not a GeneralizedTime`);
  return { imprint: contentHex(b, hashed), at };
}

// `YYYYMMDDHHMMSS[.f]Z` (RFC 3161 §2.4.2: UTC) as an instant, or null.
function generalizedTime(text) {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{0,9}))?Z$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== mo - 1 || t.getUTCDate() !== d || t.getUTCHours() !== h ||
      t.getUTCMinutes() !== mi || t.getUTCSeconds() !== s) {
    return null;
  }
  return { s: t.getTime() / 1000, f: (m[7] || "").replace(/0+$/, "") };
}

// The field `name` of `t`: present, and well formed by `test` (`label`: its name in messages).
function field(t, name, test, label = name) {
  const v = t[name];
  if (v === undefined || v === null) throw refuse(W.missing(label));
  if (!test(v)) throw refuse(W.malformed(label));
  return v;
}
const hex32 = (v) => isHex(v, 32);

// The committed secret against its commitment.
async function commitment(t) {
  const committed = field(t, "committed_seed", hex32);
  const published = field(t, "commitment", hex32);
  hold(hex(await sha256(unhex(committed))) === published.toLowerCase(), W.commitment, W.commitmentBad);
  return unhex(committed);
}

// The leaves (sorted, distinct, as many as the entrants) against the committed root.
async function committedList(t) {
  const texts = field(t, "leaves", (l) => Array.isArray(l) && l.every(hex32));
  const leaves = texts.map(unhex);
  for (let i = 1; i < leaves.length; i++) if (cmp(leaves[i - 1], leaves[i]) >= 0) throw refuse(W.unsorted(i + 1));
  const entrants = field(t, "entrants", isCount);
  if (entrants !== leaves.length) throw refuse(W.entrants(entrants, leaves.length));
  const published = field(t, "entries_root", hex32);
  const r = await root(leaves);
  hold(hex(r) === published.toLowerCase(), W.root(leaves.length), W.rootBad);
  return { leaves, root: r };
}

const REASONS = new Set(["cancelled", "unpaid", "refunded", "added"]);

// The draw itself: seed, ranking, winners, moves (domain/src/fair/check.rs, the same rules).
async function drawn(t, committed, leaves, entriesRoot) {
  // A beacon round's randomness is 32 bytes; without a beacon it is empty.
  const hasBeacon = Boolean(t.beacon && typeof t.beacon === "object");
  const randomness = field(t, "randomness", hasBeacon ? hex32 : (r) => r === "");
  const published = field(t, "seed", hex32);
  const seedText = `seckill-draw-v1:${t.voucher_id}:${hex(committed)}:${hex(entriesRoot)}:${randomness.toLowerCase()}`;
  const seed = await sha256(enc.encode(seedText));
  hold(hex(seed) === published.toLowerCase(), W.seed, W.seedBad);

  const hmacKey = await crypto.subtle.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const keyed = [];
  for (const leaf of leaves) keyed.push({ leaf, key: new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, leaf)) });
  keyed.sort((a, b) => cmp(a.key, b.key) || cmp(a.leaf, b.leaf));
  const ranking = field(t, "ranking", Array.isArray);
  if (ranking.length !== keyed.length) throw refuse(W.rankLength(ranking.length, keyed.length));
  for (let i = 0; i < keyed.length; i++) {
    const p = ranking[i] || {};
    if (p.rank !== i + 1) throw refuse(W.rankNumber(i + 1, p.rank));
    if (p.leaf !== hex(keyed[i].leaf)) throw refuse(W.rankLeaf(i + 1));
    if (p.key !== hex(keyed[i].key)) throw refuse(W.rankKey(i + 1));
  }
  say("ok", W.ranks);

  // The winners: the first min(stock, entrants) ranks, or fewer of them when the sale ended
  // before the draw was recorded (its admissions stopped at the end: src/draw/run.rs).
  const stock = field(t, "stock", Number.isSafeInteger);
  const winners = field(t, "winners", (w) => Array.isArray(w) && w.every((l) => typeof l === "string"));
  const due = Math.min(Math.max(stock, 0), keyed.length);
  const ranked = keyed.map((k) => hex(k.leaf));
  const prefix = winners.length <= due && winners.every((w, i) => w === ranked[i]);
  if (prefix && winners.length === due) {
    say("ok", W.winners(due, stock));
  } else {
    const drawnAt = seconds(field(t, "drawn_at", (v) => !Number.isNaN(seconds(v))));
    const ended = drawnAt >= await endsAt();
    if (!prefix || !ended) throw refuse(ended ? W.winnersCut(due) : W.winnersBad(due));
    say("ok", W.cut(winners.length, stock));
  }

  // The moves: each to the entrant ranked next, the first after the winners, then the one after
  // the move before (check.rs's `chained_moves`; an order the order writer refused is a move
  // too), given before the sale's end, chained from the seed.
  const moves = t.moves === undefined || t.moves === null ? [] : field(t, "moves", Array.isArray);
  let previous = seed;
  let next = winners.length;
  for (const [i, m] of moves.entries()) {
    if (!m || !REASONS.has(m.reason)) throw refuse(W.moveReason(i + 1));
    if (!hex32(m.leaf)) throw refuse(W.malformed(`moves[${i}].leaf`));
    const at = ranked.indexOf(m.leaf.toLowerCase());
    if (at < 0) throw refuse(W.moveStranger(i + 1));
    if (at !== next) throw refuse(next === ranked.length ? W.moveBeyond(i + 1, at + 1) : W.moveNotNext(i + 1, at + 1, next + 1));
    next = at + 1;
    const given = seconds(m.at);
    if (Number.isNaN(given)) throw refuse(W.malformed(`moves[${i}].at`));
    if (given >= await endsAt()) throw refuse(W.moveAfterEnd(i + 1));
    previous = await sha256(enc.encode(`${hex(previous)}:${m.leaf.toLowerCase()}:${m.reason}`));
    if (m.hash !== hex(previous)) throw refuse(W.moveHash(i + 1));
  }
  say("ok", moves.length ? W.moves(moves.length) : W.noMoves);
}

// Not checked from here: listed, and the check can end no better than "unchecked".
function notChecked(reason) {
  say("unchecked", reason);
  return new Stop("unchecked", W.unchecked(reason));
}

// GET `url` from a drand relay as JSON; a Stop "unchecked" when it cannot be had.
async function relay(url, shown) {
  let r;
  try {
    const signal = typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(RELAY_TIMEOUT_MS) : undefined;
    r = await fetch(url, { signal, credentials: "omit", referrerPolicy: "no-referrer" });
  } catch (e) {
    console.error(`draw check: ${url}:`, e);
    throw notChecked(W.relayDown(shown));
  }
  if (!r.ok) {
    console.error(`draw check: ${url} answered ${r.status}`);
    throw notChecked(W.relayAnswered(shown, r.status));
  }
  try {
    const body = await r.json();
    if (body && typeof body === "object" && !Array.isArray(body)) return body;
  } catch (e) {
    console.error(`draw check: ${url}:`, e);
  }
  throw notChecked(W.relayUnreadable(shown));
}

// The outside witness (`transcript.witness`), when published: its token timestamps this draw's
// list and round (`seckill-draw-witness-v1:{voucher}:{entries_root}:{round, or - without a
// beacon}`), at the time the transcript states, and before the round was emitted when the
// chain's clock is known (`emitted(round)`, else null). Absent: a neutral step (the close's time
// is the shop's word). Throws a Stop "mismatch" when it does not hold.
async function witness(t, entriesRoot, round, emitted) {
  const w = t.witness;
  if (w === undefined || w === null) {
    say("neutral", W.noWitness);
    return;
  }
  if (typeof w !== "object" || Array.isArray(w)) throw refuse(W.malformed("witness"));
  const tsa = field(w, "tsa", (v) => typeof v === "string" && v !== "", "witness.tsa");
  const said = instant(field(w, "at", (v) => instant(v) !== null, "witness.at"));
  const token = field(w, "token", (v) => isHex(v) && v !== "", "witness.token").toLowerCase();
  let facts;
  try {
    facts = readToken(unhex(token));
  } catch (e) {
    if (!(e instanceof DerError)) throw e;
    console.error("draw check: witness.token:", e.message);
    throw refuse(W.witnessUnreadable);
  }
  const message = `seckill-draw-witness-v1:${t.voucher_id}:${hex(entriesRoot)}:${round ?? "-"}`;
  const imprint = hex(await sha256(enc.encode(message)));
  if (facts.imprint !== imprint) throw refuse(W.witnessOther(message));
  const at = rfc3339(facts.at);
  if (!sameInstant(facts.at, said)) throw refuse(W.witnessAt(at, w.at));
  let li;
  if (round === null) {
    li = say("ok", W.witnessedNoRound(tsa, at));
  } else if (!emitted) {
    li = say("unchecked", W.witnessUnclocked(tsa, at, round));
  } else {
    // Strictly before: genTime's fraction cannot bring a later second back before a whole one.
    const e = rfc3339({ s: emitted(round), f: "" });
    if (!(facts.at.s < emitted(round))) throw refuse(W.witnessLate(at, round, e));
    li = say("ok", W.witnessed(tsa, at, round, e));
  }
  // The authority's signature: offline, with its certificate.
  const offline = document.createElement("p");
  write(offline, W.witnessOffline);
  const command = document.createElement("code");
  command.textContent = `echo ${token} | xxd -r -p > token.der && openssl ts -verify -digest ${imprint} -in token.der -token_in -CAfile ${W.certificate}`;
  const line = document.createElement("p");
  line.appendChild(command);
  li.append(offline, line);
}

// The witness of a list closed but not drawn yet: the round named, the clock of a chain this
// page pins (no relay is asked before the draw).
async function closedWitness(t, entriesRoot) {
  const b = t.beacon;
  if (!b || typeof b !== "object") return witness(t, entriesRoot, null, null);
  const round = field(b, "round", (r) => Number.isSafeInteger(r) && r >= 1, "beacon.round");
  const chain = hex32(b.chain_hash) ? await pinnedChain(b.chain_hash.toLowerCase()) : null;
  return witness(t, entriesRoot, round, chain && ((r) => chain.genesis + (r - 1) * chain.period));
}

// The beacon: the round after the close (and the planned round's rule), the witness against its
// emission, the relay's randomness the draw's, the signature over it. Throws a Stop when it
// does not hold or cannot be checked.
async function beacon(t, entriesRoot) {
  const b = t.beacon;
  if (!b || typeof b !== "object") throw refuse(W.noBeacon);
  const round = field(b, "round", (r) => Number.isSafeInteger(r) && r >= 1, "beacon.round");
  const hash = field(b, "chain_hash", hex32, "beacon.chain_hash").toLowerCase();
  const url = field(b, "url", (u) => typeof u === "string" && /^https?:\/\/[^\s/]+/.test(u), "beacon.url")
    .replace(/\/+$/, "");
  const planned = b.planned_round;
  if (planned !== undefined && planned !== null) {
    if (!Number.isSafeInteger(planned) || planned < 1) throw refuse(W.malformed("beacon.planned_round"));
    if (planned >= round) throw refuse(W.plannedNotBefore(planned, round));
  }
  const closed = seconds(t.closed_at);
  if (Number.isNaN(closed)) throw refuse(t.closed_at ? W.malformed("closed_at") : W.missing("closed_at"));
  const base = `${url}/${hash}`;

  // The chain: one this page knows, else as the relay describes it (its key then is only the
  // relay's word, and the round at best "not checked"). Its info is believed only if it hashes
  // to the chain named (drand's v1 JSON: `hash`, `groupHash`, `metadata.beaconID`, `schemeID`;
  // v2: `chain_hash`, `genesis_seed`, `beacon_id`, `scheme`). Without the chain's clock the
  // witness is still read, before the check ends "not checked".
  let chain = await pinnedChain(hash);
  let unknown = null;
  if (!chain) {
    const unclocked = async (stop) => {
      await witness(t, entriesRoot, round, null);
      return stop;
    };
    let info;
    try {
      info = await relay(`${base}/info`, url);
    } catch (e) {
      throw e instanceof Stop ? await unclocked(e) : e;
    }
    const stated = info.hash ?? info.chain_hash;
    if (stated !== undefined && (typeof stated !== "string" || stated.toLowerCase() !== hash)) throw refuse(W.otherChain);
    const recomputed = await chainHash(info.period, info.genesis_time, info.public_key, info.groupHash ?? info.genesis_seed,
      info.beacon_id ?? info.metadata?.beaconID ?? "");
    if (recomputed === null || info.period <= 0) throw await unclocked(notChecked(W.relayUnreadable(url)));
    if (recomputed !== hash) throw refuse(W.otherChain);
    say("ok", W.chainInfo(hash));
    chain = { scheme: info.schemeID ?? info.scheme, publicKey: info.public_key, genesis: info.genesis_time, period: info.period };
    unknown = W.unknownChain(hash);
  }
  // Round r is emitted at genesis + (r - 1) · period; the round used comes after the close. A
  // close after the round named at creation was emitted (src/draw/run.rs `close`) takes a later
  // round and keeps the first as `planned_round`: that one was emitted by the close.
  const emitted = (r) => chain.genesis + (r - 1) * chain.period;
  const named = planned ?? round;
  const closesAt = seconds(t.closes_at);
  if (Number.isNaN(closesAt)) throw refuse(t.closes_at ? W.malformed("closes_at") : W.missing("closes_at"));
  if (emitted(named) < closesAt) throw refuse(W.namedBeforeStart(named));
  if (!(emitted(round) > closed)) throw refuse(W.notAfterClose(round, secs(closed - emitted(round))));
  say("ok", W.emitted(round, secs(emitted(round) - closed)));
  if (planned !== undefined && planned !== null) {
    if (emitted(planned) > closed) throw refuse(W.plannedLate(planned));
    say("ok", W.moved(planned, round));
  }
  await witness(t, entriesRoot, round, emitted);

  const reply = await relay(`${base}/public/${round}`, url);
  if (reply.round !== round) throw refuse(W.otherRound(round));
  if (!isHex(reply.signature) || !isHex(reply.randomness)) throw notChecked(W.relayUnreadable(url));
  if (reply.randomness.toLowerCase() !== t.randomness.toLowerCase()) throw refuse(W.otherRandomness(round));
  const signature = unhex(reply.signature);
  hold(hex(await sha256(signature)) === reply.randomness.toLowerCase(), W.sameRandomness(round), W.notSignatureHash(round));

  if (!["bls-unchained-g1-rfc9380", "pedersen-bls-unchained"].includes(chain.scheme)) {
    throw notChecked(W.unknownScheme(String(chain.scheme)));
  }
  let verify;
  try {
    verify = await blsVerifier();
  } catch (e) {
    console.error(`draw check: ${BLS_MODULE}:`, e);
    throw notChecked(W.noBls(round));
  }
  const valid = await verify(chain.scheme, unhex(chain.publicKey), round, signature);
  hold(valid === true, unknown ? W.signedByRelayKey(round) : W.signed(round), W.badSignature(round));
  if (unknown) throw notChecked(unknown);
}

// drand's unchained schemes: the message is SHA-256 of the round as 8 big-endian bytes, hashed
// to the signature's group with RFC 9380's DST for it: G1 for `bls-unchained-g1-rfc9380`
// (quicknet; the key on G2), G2 for `pedersen-bls-unchained` (the key on G1).
const DST = {
  "bls-unchained-g1-rfc9380": "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_",
  "pedersen-bls-unchained": "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_",
};
async function blsVerifier() {
  const { bls12_381: bls } = await import(BLS_MODULE);
  return async (scheme, key, round, signature) => {
    const message = new Uint8Array(8);
    new DataView(message.buffer).setBigUint64(0, BigInt(round));
    const digest = await sha256(message);
    const sigs = scheme === "bls-unchained-g1-rfc9380" ? bls.shortSignatures : bls.longSignatures;
    try {
      return sigs.verify(signature, sigs.hash(digest, DST[scheme]), key) === true;
    } catch {
      return false; // a signature or a key that is not a point of its group
    }
  };
}

// GET `path` from the shop as a JSON object, or a Stop "error" in the page's language (the
// detail to the console); `unreadable`: the sentence for an answer that is not one.
async function shop(path, unreadable) {
  let r;
  try {
    r = await fetch(path, { headers: { accept: "application/json" } });
  } catch (e) {
    console.error(`draw check: ${path}:`, e);
    throw new Stop("error", W.shopUnreachable);
  }
  if (!r.ok) {
    console.error(`draw check: ${path}: ${r.status}`);
    throw new Stop("error", W.shopAnswered(r.status));
  }
  try {
    const body = await r.json();
    if (body && typeof body === "object" && !Array.isArray(body)) return body;
  } catch (e) {
    console.error(`draw check: ${path}:`, e);
  }
  throw new Stop("error", unreadable);
}

// The sale's end as the shop publishes it (`GET /api/vouchers/{id}`), read once when needed.
let saleEnd;
function endsAt() {
  saleEnd ??= shop(`/api/vouchers/${voucher}`, W.notSale).then((v) => {
    const end = seconds(v.ends_at);
    if (Number.isNaN(end)) throw new Stop("error", W.notSale);
    return end;
  });
  return saleEnd;
}

async function check() {
  const t = await shop(`/api/vouchers/${voucher}/draw`, W.notTranscript);
  if (String(t.voucher_id) !== voucher) throw refuse(W.otherVoucher(t.voucher_id, voucher));
  if (t.seed === undefined || t.seed === null) {
    // No draw (yet): what is published so far.
    if (t.committed_seed !== undefined && t.committed_seed !== null) {
      await commitment(t);
      return ["pending", W.ended];
    }
    if (t.entries_root !== undefined && t.entries_root !== null) {
      const { root: entriesRoot } = await committedList(t);
      await closedWitness(t, entriesRoot);
      return ["pending", W.pending];
    }
    return ["pending", W.notRun];
  }
  const committed = await commitment(t);
  const { leaves, root: entriesRoot } = await committedList(t);
  await drawn(t, committed, leaves, entriesRoot);
  // Without a beacon round the seed is the shop's secret, the root and nothing else: the shop
  // knew the ranking as soon as the entries closed (docs/draws.md). It recomputes, but nothing
  // outside the shop fixed it: never "verified".
  if (!t.beacon || typeof t.beacon !== "object") {
    await witness(t, entriesRoot, null, null);
    throw notChecked(W.noBeacon);
  }
  await beacon(t, entriesRoot);
  return ["verified", W.verified];
}

function end(state, sentence) {
  out.dataset.state = state;
  write(out, sentence);
}

if (out && steps && voucher) {
  if (!window.crypto || !crypto.subtle) {
    end("error", W.noCrypto);
  } else {
    out.dataset.state = "checking";
    write(out, W.checking);
    check().then(
      ([state, sentence]) => end(state, sentence),
      (e) => {
        if (e instanceof Stop) return end(e.state, e.sentence);
        console.error("draw check:", e);
        end("error", W.scriptFailed);
      },
    );
  }
}
