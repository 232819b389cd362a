// The desktop app's benchmarks, run by scripts/bench-app.sh inside the GUI test environment
// (scripts/e2e-gui.sh: Xvfb, a private D-Bus, WebKitWebDriver). Measured, never asserted:
//   1. launch to an interactive input, and idle PSS (the app and every process under it, 5 s
//      after launch): Bridle's release build against a blank Tauri 2 app built the same way; the
//      app processes' PSS by mapping side by side (mappings.md);
//   2. opening a 5,000-message session from Sessions, and frame times scrolling it top to bottom;
//   3. showing a 10,000-line diff in Changes, and frame times scrolling it;
//   4. the Audit view over 100,000 rows: first rows, and frame times scrolling (pages load as it
//      goes).
// Environment: E2E_WEBDRIVER_URL, E2E_APP_BINARY (Bridle), BENCH_BLANK_APP, BENCH_DATA,
// BENCH_WORKSPACE, BENCH_CONFIG, BENCH_IDS (the seed's output), BENCH_RUNS (launches of each app,
// default 9: with fewer, the medians swing by several per cent), BENCH_TREE (the commit, for the
// table), BENCH_SKIP_LAUNCH=1 (only the big-data part), BENCH_ONLY_LAUNCH=1 (only the launches),
// BENCH_EARLIER_APP (an earlier build of Bridle, launched in turn with the others: before and
// after in one run). Writes app.md, launch-trace.md, mappings.md and launches.json (every launch).
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { outDir, tempDirs, webdriverUrl } from "../../tests/e2e/lib/env.mjs";
import { sleep, startSession, waitFor } from "../../tests/e2e/lib/webdriver.mjs";
import { LAUNCH_ORDER, launchOrderMatch, openSeeded, pct, sessionItem } from "./lib.mjs";

const RUNS = Number(process.env.BENCH_RUNS || 9);
const BRIDLE = process.env.E2E_APP_BINARY;
const BLANK = process.env.BENCH_BLANK_APP;
const EARLIER = process.env.BENCH_EARLIER_APP;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs, digits = 0) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

/** Runs `script` in the page as an async WebDriver script (its last argument is `done`). */
function executeAsync(session, script, args = []) {
  return session.cmd("POST", "/execute/async", { script, args });
}

/** Pids of the processes whose executable is `binary`, and of everything under them. */
function processTree(binary) {
  const parent = new Map();
  const roots = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      if (readlinkSync(`/proc/${name}/exe`) === binary) roots.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  const tree = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (!tree.has(pid) && tree.has(ppid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

/** Proportional set size of the processes, in MiB: in all, and per process name split into
 * anonymous memory and file-backed pages (the binary and libraries). */
function pssMiB(pids) {
  let kb = 0;
  const each = {};
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) / 1024;
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      const pss = field("Pss");
      kb += pss * 1024;
      const entry = (each[name] ??= { pss: 0, anon: 0, file: 0 });
      entry.pss += pss;
      entry.anon += field("Pss_Anon");
      entry.file += field("Pss_File");
    } catch {
      // Exited meanwhile.
    }
  }
  return { total: kb / 1024, each };
}

/** The main process's PSS by mapping, in MiB, largest first: each file by name, anonymous memory
 * as "[anon]" (the heap, thread stacks and arenas), the rest by their kernel names. */
function mappingsMiB(pid) {
  const by = {};
  let name = "";
  try {
    for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (head) name = head[1] ? head[1].replace(/.*\//, "") : "[anon]";
      const pss = /^Pss:\s+(\d+) kB/.exec(line);
      if (pss) by[name] = (by[name] ?? 0) + Number(pss[1]) / 1024;
    }
  } catch {
    // Exited meanwhile.
  }
  return Object.entries(by).sort((x, y) => y[1] - x[1]);
}

/** The page's own marks: navigation timing and the window's first render, in ms since the
 * page's navigation began. */
const PAGE_MARKS = `
  const nav = performance.getEntriesByType('navigation')[0];
  // When the page ran this script, just after the input was found enabled.
  const marks = { origin: performance.timeOrigin, 'page: these marks read': performance.now() };
  if (nav) {
    marks['page: HTML and scripts fetched'] = nav.responseEnd;
    marks['page: DOM parsed, scripts run'] = nav.domContentLoadedEventEnd;
    marks['page: load event done'] = nav.loadEventEnd;
  }
  for (const e of performance.getEntriesByType('paint')) marks['page: ' + e.name] = e.startTime;
  for (const e of performance.getEntriesByType('mark')) marks['page: ' + e.name] = e.startTime;
  const scripts = performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'script' || e.name.endsWith('.js'));
  marks['page: scripts fetched (count)'] = scripts.length;
  return marks;`;

/** The launch's phases as the app logged them under `dataDir` (bridle_core::clock::Phase):
 * name -> { ms, at } (a mark has no ms). */
function loggedPhases(dataDir) {
  const phases = {};
  let text = "";
  try {
    for (const name of readdirSync(join(dataDir, "logs"))) text += readFileSync(join(dataDir, "logs", name), "utf8");
  } catch {
    return phases;
  }
  for (const line of text.split("\n")) {
    const phase = /phase (.+): ([\d.]+) ms, ended at ([\d.]+) ms/.exec(line);
    const mark = /mark (.+) at ([\d.]+) ms/.exec(line);
    // The first of each name: the launch's, not a later session's.
    if (phase && !phases[phase[1]]) phases[phase[1]] = { ms: Number(phase[2]), at: Number(phase[3]) };
    else if (mark && !phases[mark[1]]) phases[mark[1]] = { at: Number(mark[2]) };
  }
  return phases;
}

/** Launches `binary`, times it to an enabled `input`, waits 5 s, reads its PSS, closes it. */
async function launchOnce(binary, args, input, dataDir) {
  const started = performance.now();
  const startedAt = Date.now();
  const session = await startSession(webdriverUrl(), binary, args);
  try {
    await waitFor(async () => {
      const found = await session.cmd("POST", "/elements", { using: "css selector", value: input });
      if (found.length === 0) return false;
      const ref = Object.values(found[0])[0];
      return session.cmd("GET", `/element/${ref}/enabled`);
    }, input, 30000, 5);
    const launchMs = performance.now() - started;
    const page = await session.execute(PAGE_MARKS).catch(() => ({}));
    // When the page's navigation began, since the app was asked to launch: what the process, its
    // window and WebKit's processes took before the page (the page's marks count from there).
    if (page.origin) page["page: navigation began, since the launch was asked"] = page.origin - startedAt;
    delete page.origin;
    await sleep(5000);
    const pids = processTree(binary);
    const pss = pssMiB(pids);
    const mappings = mappingsMiB(pids[0]);
    const phases = dataDir ? loggedPhases(dataDir) : {};
    return { launchMs, pss: pss.total, each: pss.each, mappings, processes: pids.length, page, phases };
  } finally {
    await session.cmd("DELETE", "").catch(() => {});
    await sleep(500);
  }
}

async function launches(rows) {
  const dirs = tempDirs();
  try {
    const apps = [
      { name: "Bridle", binary: BRIDLE, input: "[data-testid=chat-input]", bridle: true },
      { name: "blank Tauri 2 app", binary: BLANK, input: "#name-input" },
    ];
    // An earlier build of Bridle, launched in turn with the two: before and after in one run.
    if (EARLIER) apps.push({ name: "Bridle, earlier build", binary: EARLIER, input: "[data-testid=chat-input]", bridle: true });
    const results = Object.fromEntries(apps.map((a) => [a.name, []]));
    // Alternate them, so a slow moment of the machine falls on each.
    for (let run = 0; run < RUNS; run++) {
      for (const app of apps) {
        const data = app.bridle ? dirs.make("data") : null;
        const args = data ? ["--data-dir", data, "--workspace", dirs.make("ws"), "--config", process.env.BENCH_CONFIG] : [];
        results[app.name].push(await launchOnce(app.binary, args, app.input, data));
      }
    }
    for (const app of apps) {
      const r = results[app.name];
      const launch = r.map((x) => x.launchMs);
      rows.push([`launch to an interactive input: ${app.name}`, `${median(launch).toFixed(0)} ms`, `median of ${RUNS}, range ${range(launch)} ms`]);
      const pss = r.map((x) => x.pss);
      const split = Object.entries(r[r.length - 1].each)
        .map(([n, m]) => `${n} ${m.pss.toFixed(0)} (anon ${m.anon.toFixed(0)}, file ${m.file.toFixed(0)})`)
        .join(", ");
      rows.push([
        `idle PSS 5 s after launch: ${app.name}`,
        `${median(pss).toFixed(1)} MiB`,
        `median of ${RUNS}, range ${range(pss, 1)}; last run by process, MiB: ${split}`,
      ]);
    }
    const [a, b, earlier] = apps.map((app) => results[app.name]);
    launchTrace(a, b);
    // Every launch's figures, for a closer look than the tables' medians.
    writeFileSync(join(outDir(), "launches.json"), `${JSON.stringify(results, (k, v) => (k === "mappings" ? undefined : v), 1)}\n`);
    mappingTable(apps.map((app) => [app.name, results[app.name].at(-1).mappings]));
    const ratio = (x, y, key) => (median(x.map((r) => r[key])) / median(y.map((r) => r[key]))).toFixed(2);
    rows.push(["idle PSS ratio Bridle / blank", ratio(a, b, "pss"), "goal ≤ 1.10"]);
    rows.push(["launch ratio Bridle / blank", ratio(a, b, "launchMs"), "goal ≤ 1.00"]);
    if (earlier) {
      rows.push(["idle PSS ratio earlier build / blank", ratio(earlier, b, "pss"), ""]);
      rows.push(["launch ratio earlier build / blank", ratio(earlier, b, "launchMs"), ""]);
    }
  } finally {
    dirs.cleanup();
  }
}

/** In the page: scrolls `selector` from one end to the other in `step` px per frame; frame times. */
const SCROLL = `
  const [selector, step, downwards, maxFrames, done] = arguments;
  const el = document.querySelector(selector);
  const frames = [];
  // WebKitGTK has no Long Tasks API (checked here, not assumed): frames over 50 ms stand in.
  const longTasks = PerformanceObserver.supportedEntryTypes?.includes('longtask') ? [] : null;
  const observer = longTasks && new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
  observer?.observe({ type: 'longtask' });
  let last = performance.now();
  // WebDriver's request gives up after 60 s: a scroll that slow stops at 50 s and says so.
  const began = last;
  el.scrollTop = downwards ? 0 : el.scrollHeight;
  const tick = () => {
    const now = performance.now();
    frames.push(now - last);
    last = now;
    const before = el.scrollTop;
    el.scrollTop = before + (downwards ? step : -step);
    const atEnd = downwards ? el.scrollTop + el.clientHeight >= el.scrollHeight - 1 : el.scrollTop <= 0;
    const late = now - began > 50000;
    if (atEnd || frames.length >= maxFrames || late) {
      observer?.disconnect();
      done({ late, frames: frames.slice(1), longTasks, rows: el.querySelectorAll('[data-testid=audit-row], [data-testid=message], .diff-line').length });
    }
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
`;

/** In the page: a box over `arguments[0]`, as large, scrolling 1,000,000 px, whose 20 plain lines
 * are moved to the top of the view at every scroll. */
const FLOOR_BOX = `
  const r = document.querySelector(arguments[0]).getBoundingClientRect();
  const box = document.createElement('div');
  box.id = 'bench-floor';
  Object.assign(box.style, { position: 'fixed', left: r.left + 'px', top: r.top + 'px', width: r.width + 'px', height: r.height + 'px', overflow: 'auto', background: 'var(--bg)', zIndex: 99 });
  const space = document.createElement('div');
  Object.assign(space.style, { height: '1000000px', position: 'relative' });
  const lines = document.createElement('div');
  Object.assign(lines.style, { position: 'absolute', top: '0', left: '0', right: '0' });
  for (let i = 0; i < 20; i++) {
    const p = document.createElement('p');
    p.textContent = 'Step ' + i + ': the parser now keeps offsets per token; checked src/lexer.rs and ran the tests.';
    lines.appendChild(p);
  }
  space.appendChild(lines);
  box.appendChild(space);
  document.body.appendChild(box);
  box.addEventListener('scroll', () => { lines.style.top = box.scrollTop + 'px'; });
`;

/** The launch trace, printed as a table of its own: each phase the app logged (its duration and
 * when it ended, since the process began), then the page's marks for both apps (since the
 * page's navigation began); medians over the runs. */
function launchTrace(bridle, blank) {
  const lines = ["| launch phase (Bridle's log; page marks for both) | took | ended at | blank app |", "|---|---|---|---|"];
  const names = [...new Set(bridle.flatMap((r) => Object.keys(r.phases)))];
  const at = (r, n) => r.phases[n]?.at;
  names.sort((x, y) => median(bridle.map((r) => at(r, x) ?? Infinity)) - median(bridle.map((r) => at(r, y) ?? Infinity)));
  const med = (xs) => (xs.length ? median(xs).toFixed(1) : "");
  for (const n of names) {
    const took = bridle.map((r) => r.phases[n]?.ms).filter((x) => x !== undefined);
    const ended = bridle.map((r) => at(r, n)).filter((x) => x !== undefined);
    lines.push(`| ${n} | ${took.length ? `${med(took)} ms` : "(mark)"} | ${med(ended)} ms | |`);
  }
  const pageNames = [...new Set([...bridle, ...blank].flatMap((r) => Object.keys(r.page ?? {})))];
  for (const n of pageNames) {
    const of = (rs) => rs.map((r) => r.page?.[n]).filter((x) => typeof x === "number");
    const unit = n.endsWith("(count)") ? "" : " ms";
    const [x, y] = [of(bridle), of(blank)];
    lines.push(`| ${n} | | ${x.length ? med(x) + unit : ""} | ${y.length ? med(y) + unit : ""} |`);
  }
  const table = lines.join("\n");
  console.log(table);
  writeFileSync(join(outDir(), "launch-trace.md"), `${table}\n`);
}

/** The app processes' PSS by mapping, side by side (the last launch of each), every mapping of
 * 0.5 MiB or more in either; written to mappings.md. */
function mappingTable(apps) {
  const maps = apps.map(([, m]) => new Map(m));
  const names = [...new Set(apps.flatMap(([, m]) => m.filter(([, mib]) => mib >= 0.5).map(([n]) => n)))];
  names.sort((x, y) => (maps[0].get(y) ?? 0) - (maps[0].get(x) ?? 0));
  const cell = (m, n) => (m.has(n) ? m.get(n).toFixed(1) : "");
  const lines = [`| app process, PSS by mapping (MiB) | ${apps.map(([n]) => n).join(" | ")} |`, `|---|${apps.map(() => "---|").join("")}`];
  for (const n of names) lines.push(`| ${n} | ${maps.map((m) => cell(m, n)).join(" | ")} |`);
  const total = (m) => [...m.values()].reduce((x, y) => x + y, 0).toFixed(1);
  lines.push(`| in all | ${maps.map(total).join(" | ")} |`);
  const table = lines.join("\n");
  console.log(table);
  writeFileSync(join(outDir(), "mappings.md"), `${table}\n`);
}

function frameRow(rows, what, result) {
  const f = result.frames;
  rows.push([
    what,
    `max ${Math.max(...f).toFixed(0)} ms`,
    `p95 ${pct(f, 95).toFixed(0)} ms, ${f.filter((x) => x > 50).length} of ${f.length} frames over 50 ms, ${result.rows} rows in the DOM at the end; ` +
      (result.longTasks ? `${result.longTasks.length} long tasks` : "no Long Tasks API in this WebKit") +
      (result.late ? "; stopped after 50 s, before the end" : ""),
  ]);
}

async function bigSessions(rows) {
  const ids = JSON.parse(process.env.BENCH_IDS);
  const { session, click } = await openSeeded(BRIDLE);
  try {

    // What a frame takes here with nothing to do: the floor under the scroll figures below.
    const idle = await executeAsync(session, `
      const done = arguments[0];
      const frames = [];
      let last = performance.now();
      const tick = () => {
        const now = performance.now();
        frames.push(now - last);
        last = now;
        if (frames.length > 120) done(frames.slice(1));
        else requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);`);
    rows.push(["frame interval with nothing happening (Bridle, 120 frames)", `median ${median(idle).toFixed(1)} ms`, `p95 ${pct(idle, 95).toFixed(1)} ms, max ${Math.max(...idle).toFixed(1)} ms: Xvfb, no GPU`]);

    // 2. Open the 5,000-message session from Sessions: click to its last message on screen.
    await click("[data-testid=nav-sessions]");
    await waitFor(() => session.find(sessionItem(ids.long)), "the long session listed", 30000);
    const openMs = await executeAsync(session, `
      const [css, done] = arguments;
      const t0 = performance.now();
      document.querySelector(css).click();
      const check = () => {
        const msgs = document.querySelectorAll('[data-testid=message]');
        const last = msgs[msgs.length - 1];
        if (last && last.textContent.includes('Step 2499') && last.getBoundingClientRect().height > 0) done(performance.now() - t0);
        else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);`, [sessionItem(ids.long)]);
    rows.push(["open a 5,000-message session (click to the last message shown)", `${openMs.toFixed(0)} ms`, "goal < 500 ms"]);
    await sleep(1000);
    // The platform's floor under the scroll figures: a bare box over the transcript, as large, whose
    // 20 plain lines move into view on every scroll (the least a virtualised list can do), scrolled
    // the same way. Under Xvfb every frame that changes anything is composited in software, so
    // this is far above the idle frame.
    await session.execute(FLOOR_BOX, [".message-list"]);
    // As many frames as the longest scrolls below, so their counts over 50 ms compare with its.
    frameRow(rows, "the floor: a bare box of 20 plain lines, as large, scrolled 1,500 px a frame (600 frames)", await executeAsync(session, SCROLL, ["#bench-floor", 1500, false, 600]));
    await session.execute("document.getElementById('bench-floor').remove();");
    await sleep(500);
    // A fling through all of it (about 10 new messages a frame), then a steadier 100 px a frame
    // (about 10 s, a new message every frame or two) from the bottom again.
    frameRow(rows, "scroll the 5,000-message session, bottom to top (1,500 px a frame)", await executeAsync(session, SCROLL, [".message-list", 1500, false, 1000]));
    await session.execute("const el = document.querySelector('.message-list'); el.scrollTop = el.scrollHeight;");
    await sleep(1000);
    frameRow(rows, "scroll the 5,000-message session up, 600 frames of 100 px", await executeAsync(session, SCROLL, [".message-list", 100, false, 600]));
    writeFileSync(join(outDir(), "bench-long-session.png"), Buffer.from(await session.cmd("GET", "/screenshot"), "base64"));

    // 4. The Audit view over the session's 100,000 rows.
    const auditMs = await executeAsync(session, `
      const done = arguments[0];
      const t0 = performance.now();
      document.querySelector('[data-testid=nav-audit]').click();
      const check = () => document.querySelector('[data-testid=audit-row]') ? done(performance.now() - t0) : requestAnimationFrame(check);
      requestAnimationFrame(check);`);
    rows.push(["Audit view, 100,000 rows: click to the first rows", `${auditMs.toFixed(0)} ms`, ""]);
    await sleep(500);
    // 600 frames (about 10 s) of scrolling down, older pages loading as the end nears.
    const scrolled = await executeAsync(session, SCROLL, [".audit-scroll", 400, true, 600]);
    const loaded = await session.execute("return document.querySelector('.audit .muted').innerText");
    frameRow(rows, `scroll the audit rows down, 600 frames of 400 px (${loaded} loaded by then)`, scrolled);

    // 3. A 10,000-line diff: open its session, then time Changes.
    await click("[data-testid=nav-sessions]");
    await click(sessionItem(ids.diff));
    await waitFor(async () => {
      const chat = await session.find("[data-testid=nav-chat][aria-current=page]");
      return chat && (await session.findAll(".chat [data-testid=message]")).length >= 2;
    }, "the diff session's history in Chat", 30000);
    await sleep(500);
    // Shown: the diff's box holds all its lines (all in the DOM, or a virtualised box whose
    // data-lines says how many it scrolls through) and its first line is laid out on screen.
    const diff = await executeAsync(session, `
      const done = arguments[0];
      const t0 = performance.now();
      document.querySelector('[data-testid=nav-changes]').click();
      const check = () => {
        const box = document.querySelector('[data-testid=diff-view] .diff');
        const first = box?.querySelector('.diff-line');
        const lines = Math.max(Number(box?.dataset.lines ?? 0), document.querySelectorAll('[data-testid=diff-view] .diff-line').length);
        const drawn = first && first.getBoundingClientRect().height > 0;
        if ((lines >= 10000 && drawn) || performance.now() - t0 > 20000) {
          done({ ms: performance.now() - t0, lines, inDom: document.querySelectorAll('[data-testid=diff-view] .diff-line').length });
        } else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);`);
    writeFileSync(join(outDir(), "bench-diff.png"), Buffer.from(await session.cmd("GET", "/screenshot"), "base64"));
    const diffMs = diff.lines >= 10000 ? diff.ms : NaN;
    if (diff.lines < 10000) rows.push(["10,000-line diff: lines shown after 20 s", String(diff.lines), "see bench-diff.png"]);
    rows.push([
      "show a 10,000-line diff in Changes (click to its first line drawn, all lines in its box)",
      `${diffMs.toFixed(0)} ms`,
      `goal < 300 ms; ${diff.inDom} of its lines in the DOM`,
    ]);
    await sleep(500);
    frameRow(rows, "scroll the 10,000-line diff down, 600 frames of 400 px", await executeAsync(session, SCROLL, ["[data-testid=diff-view] .diff", 400, true, 600]));
  } finally {
    await session.cmd("DELETE", "").catch(() => {});
  }
}

/** How much of the launch order (src-tauri/launch-order.txt: the functions a launch runs, laid
 * out together by the release build) names functions this binary has: the list ages as the code
 * changes, and scripts/bench-app/launch-order.sh makes it again. */
function launchOrderRow() {
  const { exact, byName, all } = launchOrderMatch(LAUNCH_ORDER, BRIDLE);
  return [
    "launch order: its functions in this binary, as listed / by name only",
    `${exact} / ${byName} of ${all}`,
    "by name places every function of that name; below 90 % as listed, run scripts/bench-app/launch-order.sh",
  ];
}

const rows = [];
/** How busy the whole machine is over `ms`, as a share of all its cores (from /proc/stat). */
async function cpuBusy(ms) {
  const read = () => readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const a = read();
  await sleep(ms);
  const d = read().map((x, i) => x - a[i]);
  const total = d.reduce((x, y) => x + y, 0);
  return `${(100 * (1 - (d[3] + d[4]) / total)).toFixed(0)}%`;
}
const busyBefore = await cpuBusy(3000);
try {
  if (process.env.BENCH_SKIP_LAUNCH !== "1") await launches(rows);
  if (process.env.BENCH_ONLY_LAUNCH !== "1") await bigSessions(rows);
} finally {
  rows.push(["built from", process.env.BENCH_TREE ?? "unknown", "release builds of both apps"]);
  if (process.env.BENCH_SKIP_LAUNCH !== "1") rows.push(launchOrderRow());
  rows.push([
    "CPU busy over 3 s before the first launch / after the last measure",
    `${busyBefore} / ${await cpuBusy(3000)}`,
    `of all ${cpus().length} cores; other work on the machine skews every figure`,
  ]);
  const width = Math.max(...rows.map((r) => r[0].length), 10);
  const lines = [`| ${"measure".padEnd(width)} | value | notes |`, `|${"-".repeat(width + 2)}|---|---|`];
  for (const [what, value, notes] of rows) lines.push(`| ${what.padEnd(width)} | ${value} | ${notes} |`);
  const table = lines.join("\n");
  console.log(table);
  writeFileSync(join(outDir(), "app.md"), `${table}\n`);
}
process.exit(0);
