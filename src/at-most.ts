// Bounded parallelism for sends that each hold a socket (mail servers, Slack-style receivers): a
// fetch's firings may name hundreds of them, and a receiver (or a small mail server) should not
// see them all at once.

/** `fn` over `items`, at most `n` running at once; answers each result in order (as Promise.allSettled). */
export async function settleAtMost<T, R>(
  n: number,
  items: readonly T[],
  fn: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const out = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = { status: 'fulfilled', value: await fn(items[i]!) };
      } catch (reason) {
        out[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  return out;
}
