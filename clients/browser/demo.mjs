// The demo page of `make run` in a real browser: the widget answers an
// example question, and the time from sending a question to the first
// answer text on screen is measured over several runs (started by
// BenchmarkWidgetFirstToken and TestDemoPageInBrowser). Input on stdin:
//   {chromium, page, runs, artifacts, apiQuestion?, shots?}
// Prints {firstTokenMs: [...], totalMs: [...], text, sources, console,
// overflow}. With shots (page URLs) and artifacts, each page is also
// captured on a desktop and on a phone (menu open too), and overflow lists
// the phone pages wider than the screen.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { firstTokenMs: [], totalMs: [], console: [] };
const { context, close } = await launch(input);
const timeout = 20_000;

try {
  const page = await context.newPage();
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.page);
  await page.waitForFunction(() => window.docsmith?.version, null, { timeout });
  await page.locator('button.launcher').click();
  await page.locator('[role=dialog]').waitFor({ timeout });
  if (input.artifacts) await page.screenshot({ path: `${input.artifacts}/demo-welcome.png` });
  const questions = await page.locator('.examples button').allTextContents();
  out.examples = questions;

  for (let i = 0; i < (input.runs ?? 1); i++) {
    if (i > 0) await page.locator('button[aria-label="New conversation"]').click();
    const q = questions[i % questions.length];
    await page.evaluate(() => {
      const root = document.querySelector('docsmith-widget').shadowRoot;
      const t = { sent: performance.now(), first: 0, done: 0 };
      window.__t = t;
      const mo = new MutationObserver(() => {
        const md = root.querySelector('.msg.assistant .md');
        if (!t.first && md && md.textContent.length > 0) t.first = performance.now();
        if (!t.done && root.querySelector('.msg.assistant .actions')) {
          t.done = performance.now();
          mo.disconnect();
        }
      });
      mo.observe(root, { subtree: true, childList: true, characterData: true });
    });
    await page.locator('.examples button').nth(i % questions.length).click();
    await page.waitForFunction(() => window.__t.done > 0, null, { timeout });
    const t = await page.evaluate(() => window.__t);
    out.firstTokenMs.push(t.first - t.sent);
    out.totalMs.push(t.done - t.sent);
  }
  out.text = await page.locator('.msg.assistant .md').last().textContent();
  out.sources = await page.locator('.msg.assistant .sources a').evaluateAll((as) => as.map((a) => a.href));

  // A site's own search box: docsmith.open(question) asks at once.
  if (input.apiQuestion) {
    await page.locator('button[aria-label="New conversation"]').click();
    await page.evaluate(() => window.docsmith.close());
    // Opened from the launcher, closed: the focus is back on the launcher.
    await page.waitForTimeout(50);
    out.focusAfterClose = await page.evaluate(() => document.querySelector('docsmith-widget').shadowRoot.activeElement?.className ?? '');
    await page.evaluate((q) => window.docsmith.open(q), input.apiQuestion);
    await page.locator('.msg.assistant .actions').waitFor({ timeout });
    out.apiQuestion = await page.locator('.msg.user').last().textContent();
    out.apiSources = await page.locator('.msg.assistant .sources a').evaluateAll((as) => as.map((a) => a.href));
  }
  if (input.artifacts) {
    await page.screenshot({ path: `${input.artifacts}/demo-answer.png` });
    await page.evaluate(() => window.docsmith.close());
    await page.screenshot({ path: `${input.artifacts}/demo-closed.png` });
  }
  if (input.shots?.length && input.artifacts) {
    out.overflow = [];
    const name = (u, i) => `${String(i).padStart(2, '0')}-${new URL(u).pathname.replace(/^\/demo\/?/, '').replaceAll('/', '-') || 'index'}`;
    for (const [i, u] of input.shots.entries()) {
      await page.goto(u);
      await page.screenshot({ path: `${input.artifacts}/desktop-${name(u, i)}.png` });
    }
    const phone = await launch(input, { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });
    try {
      const p = await phone.context.newPage();
      p.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
      for (const [i, u] of input.shots.entries()) {
        await p.goto(u);
        await p.screenshot({ path: `${input.artifacts}/phone-${name(u, i)}.png` });
        const wide = await p.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
        if (wide) out.overflow.push(u);
      }
      await p.locator('label[for=menu]').click();
      await p.screenshot({ path: `${input.artifacts}/phone-menu.png` });
      out.menuShown = await p.locator('nav.side').isVisible();
    } finally {
      await phone.close();
    }
  }
  log('demo runs', out.firstTokenMs.length);
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
