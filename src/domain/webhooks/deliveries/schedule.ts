// When a failed attempt is tried again (docs/api.md "Webhooks", Svix's schedule): about 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h and 10 h after the attempts before it, eight attempts in all over about
// 27.6 hours. A jitter of up to a tenth spreads the retries of a burst that failed together.
const delaysSeconds = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];

export const maxAttempts = delaysSeconds.length + 1;

/** An endpoint whose every attempt failed for this long is disabled. */
export const disableAfterMs = 5 * 24 * 3600 * 1000;

/** Seconds before the attempt after attempt `n` (1-based) failed; undefined when it was the last. */
export function retryDelaySeconds(n: number, random: () => number = Math.random): number | undefined {
  const base = delaysSeconds[n - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + random() / 10));
}
