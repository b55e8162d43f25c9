// Proof of work: a domain under abuse may ask each answer for a solved
// challenge (ALTCHA's scheme), so that a script asking thousands of
// questions pays in CPU. The reader's browser finds the number whose
// SHA-256 after the salt is the challenge, yielding to the page now and
// then so that it stays responsive.

import { sha256 } from '@noble/hashes/sha2.js';

/** powHeader carries a solution; the server names the challenge endpoint in powChallengeHeader when it wants one. */
export const powHeader = 'X-Docsmith-Pow';
export const powChallengeHeader = 'X-Docsmith-Pow-Challenge';

export interface Challenge {
  algorithm: string;
  challenge: string;
  maxNumber: number;
  salt: string;
  signature: string;
}

/** yieldEvery is how long the search runs before it lets the page paint and take input. */
const yieldEvery = 40; // milliseconds
/** batch is how many numbers are hashed between looks at the clock. */
const batch = 1000;

/** solve finds the challenge's number and returns the header's value: base64 of the solution's JSON. */
export async function solve(c: Challenge, signal?: AbortSignal): Promise<string> {
  if (c.algorithm !== 'SHA-256' || !/^[0-9a-f]{64}$/.test(c.challenge) || !(c.maxNumber >= 0)) {
    throw new Error('the proof-of-work challenge is not one this widget can solve');
  }
  const target = new Uint8Array(32);
  for (let i = 0; i < 32; i++) target[i] = parseInt(c.challenge.slice(2 * i, 2 * i + 2), 16);
  const encoder = new TextEncoder();
  let since = performance.now();
  for (let n = 0; n <= c.maxNumber; n++) {
    // A synchronous hash, not Web Crypto's crypto.subtle.digest: awaiting
    // a promise for each number costs far more than hashing a few bytes.
    if (equal(sha256(encoder.encode(c.salt + n)), target)) {
      return btoa(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature }));
    }
    if (n % batch === batch - 1 && performance.now() - since > yieldEvery) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      signal?.throwIfAborted();
      since = performance.now();
    }
  }
  throw new Error('the proof-of-work challenge has no solution');
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return a.length === b.length;
}
