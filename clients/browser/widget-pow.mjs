// The chat widget on a domain that asks for proof of work (started by
// internal/app/widget_pow_browser_test.go, which checks the server's side).
// The widget must still get its answer: refused once, it fetches a
// challenge, solves it and asks again. Input on stdin:
//   {chromium, artifacts, page, question, slowQuestion, cpuSlowdown}
// Prints {failure, console, first, slow, screenshot}: each answer's text,
// error and milliseconds from Enter to the finished answer.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { console: [] };
const { context, close } = await launch(input);
const timeout = 90_000;

/** ask types a question and waits for the answer (or an error) to be complete. */
async function ask(page, question) {
  const before = await page.evaluate(() => document.querySelector('docsmith-widget').shadowRoot.querySelectorAll('.msg.assistant .actions').length);
  const box = page.locator('textarea[aria-label="Your question"]');
  await box.fill(question);
  const sent = Date.now();
  await box.press('Enter');
  await page.waitForFunction(
    (before) => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      return r.querySelectorAll('.msg.assistant .actions').length > before || r.querySelector('.error[role=alert]');
    },
    before,
    { timeout },
  );
  const ms = Date.now() - sent;
  return page.evaluate(
    ({ before, ms }) => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      const msg = r.querySelectorAll('.msg.assistant')[before];
      return { text: msg?.querySelector('.md')?.textContent ?? '', error: r.querySelector('.error[role=alert] p')?.textContent ?? '', ms };
    },
    { before, ms },
  );
}

try {
  const page = await context.newPage();
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`));
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.page);
  await page.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
  await page.evaluate(() => window.docsmith.open());
  await page.locator('[role=dialog]').waitFor({ timeout });

  out.first = await ask(page, input.question);
  log('first answer', JSON.stringify(out.first).slice(0, 200));

  // A slower CPU, as a phone's, for a rough cost of the proof to a reader.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: input.cpuSlowdown });
  out.slow = await ask(page, input.slowQuestion);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  log('slow answer', JSON.stringify(out.slow).slice(0, 200));

  out.screenshot = `${input.artifacts}/widget-proof-of-work.png`;
  await page.screenshot({ path: out.screenshot });
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
