// Where a scroll frame goes, for profiling before a change (BENCH_PROBE=1 scripts/bench-app.sh, in
// the GUI test environment like run.mjs): the big session's transcript and the 10,000-line diff
// are scrolled as the benchmark scrolls them, and each frame is split into the scroll handlers'
// script (the virtualised lists render there), the layout it leaves (forced right after), and the
// rest, which is mostly WebKit painting. PROBE_RULES (a JSON list of CSS rules, "" for none)
// scrolls again with each rule added to the page (through the CSSOM, which the CSP allows), so a
// style's cost shows without a rebuild. Measured, never asserted; prints one line per scroll.
// Environment: as run.mjs, plus PROBE (`messages,diff` by default; `audit` too) and PROBE_RULES.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { outDir } from "../../tests/e2e/lib/env.mjs";
import { sleep, waitFor } from "../../tests/e2e/lib/webdriver.mjs";
import { openSeeded, pct, sessionItem } from "./lib.mjs";

const ids = JSON.parse(process.env.BENCH_IDS);
const parts = (process.env.PROBE ?? "messages,diff").split(",");
const variants = JSON.parse(process.env.PROBE_RULES ?? '[""]');

/** In the page: scrolls `selector` `step` px a frame with `rule` added; each frame's parts. */
const PROFILE = `
  const [selector, step, downwards, maxFrames, rule, done] = arguments;
  const el = document.querySelector(selector);
  const sheet = document.styleSheets[0];
  if (rule) sheet.insertRule(rule, sheet.cssRules.length);
  const frames = [], script = [], layout = [];
  let began = 0, handled = 0, laidOut = 0;
  // The document's capturing listener runs before the list's own, this one after it.
  const before = () => { began = performance.now(); };
  const after = () => {
    const t = performance.now();
    handled = t - began;
    void el.scrollHeight;
    laidOut = performance.now() - t;
  };
  document.addEventListener('scroll', before, { capture: true });
  el.addEventListener('scroll', after);
  el.scrollTop = downwards ? 0 : el.scrollHeight;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    frames.push(now - last); script.push(handled); layout.push(laidOut);
    handled = 0; laidOut = 0; last = now;
    el.scrollTop += downwards ? step : -step;
    const atEnd = downwards ? el.scrollTop + el.clientHeight >= el.scrollHeight - 1 : el.scrollTop <= 0;
    if (!atEnd && frames.length < maxFrames) return requestAnimationFrame(tick);
    document.removeEventListener('scroll', before, { capture: true });
    el.removeEventListener('scroll', after);
    const box = [el.clientWidth, el.clientHeight];
    if (rule) sheet.deleteRule(sheet.cssRules.length - 1);
    done({ frames: frames.slice(2), script: script.slice(2), layout: layout.slice(2), box });
  };
  requestAnimationFrame(tick);
`;

function report(what, rule, r) {
  const f = (xs) => `p50 ${pct(xs, 50).toFixed(0)} p95 ${pct(xs, 95).toFixed(0)}`;
  const over = r.frames.filter((x) => x > 50).length;
  console.log(
    `${what}${rule ? ` + ${rule}` : ""}: frame ${f(r.frames)} ms (${over} of ${r.frames.length} over 50) | ` +
      `script ${f(r.script)} | layout ${f(r.layout)} | box ${r.box.join("x")} px`,
  );
  // The slow frames themselves: is it the script, the layout, or the rest?
  const slow = r.frames.flatMap((x, i) => (x > 50 ? [`${x.toFixed(0)} (${r.script[i].toFixed(0)}+${r.layout[i].toFixed(0)})`] : []));
  if (slow.length) console.log(`  frames over 50 ms, (script+layout): ${slow.join(", ")}`);
}

const { session, click } = await openSeeded(process.env.E2E_APP_BINARY);
const profile = (selector, step, downwards, rule) =>
  session.cmd("POST", "/execute/async", { script: PROFILE, args: [selector, step, downwards, 300, rule] });
try {
  const open = async (id) => {
    await click("[data-testid=nav-sessions]");
    await click(sessionItem(id));
    await waitFor(async () => (await session.findAll("[data-testid=message]")).length >= 2, "the session's messages", 30000);
    await sleep(1000);
  };
  if (parts.includes("messages")) {
    await open(ids.long);
    for (const rule of variants) {
      for (const step of [1500, 100]) report(`5,000 messages, ${step} px a frame`, rule, await profile(".message-list", step, false, rule));
    }
  }
  if (parts.includes("diff")) {
    await open(ids.diff);
    await click("[data-testid=nav-changes]");
    await waitFor(() => session.find("[data-testid=diff-view] .diff .diff-line"), "the diff", 30000);
    await sleep(1000);
    writeFileSync(join(outDir(), "probe-diff.png"), Buffer.from(await session.cmd("GET", "/screenshot"), "base64"));
    for (const rule of variants) report("10,000-line diff, 400 px a frame", rule, await profile("[data-testid=diff-view] .diff", 400, true, rule));
  }
  if (parts.includes("audit")) {
    // As the benchmark scrolls it: the long session's rows (opened again: the diff's session may
    // be the one shown), 400 px a frame from the newest, older pages loading as it goes.
    await open(ids.long);
    await click("[data-testid=nav-audit]");
    await waitFor(() => session.find("[data-testid=audit-row]"), "the audit rows", 30000);
    await sleep(1000);
    writeFileSync(join(outDir(), "probe-audit.png"), Buffer.from(await session.cmd("GET", "/screenshot"), "base64"));
    for (const rule of variants) report("audit, 400 px a frame", rule, await profile(".audit-scroll", 400, true, rule));
  }
} finally {
  await session.cmd("DELETE", "").catch(() => {});
}
process.exit(0);
